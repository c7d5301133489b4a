package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// newLoginCmd is `chime login`: a session for the other commands, saved
// in the credentials file.
func newLoginCmd(cfg *clientConfig) *cobra.Command {
	var (
		username      string
		passwordStdin bool
		sso           bool
	)
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Log in and save the session token for the other commands",
		Long: `Log in with a user name and password and save the session token in
$XDG_CONFIG_HOME/chime/` + credentialsName + ` (~/.config/chime/` + credentialsName + ` when
XDG_CONFIG_HOME is not set), readable by you alone, under the server's URL.
The other commands use it when neither --token nor ` + envToken + ` is given;
chime logout ends the session and removes it.

The password is asked for on the terminal, or read from the first line of
standard input with --password-stdin. With --sso, chime login signs in
through the server's single sign-on provider instead: it prints a URL to
open in a browser, listens on 127.0.0.1 for the browser's return, and
exchanges what comes back (a one-time code, bound to this run by PKCE) for
a session, saved the same way. -o json or -o yaml prints the
session, token included, for scripts.`,
		Example: `  chime login --server https://chime.example.com --username ann
  chime login --server https://chime.example.com --sso
  printf '%s\n' "$PASSWORD" | chime login --username admin --password-stdin`,
		Args: cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			path, creds, err := cfg.credentials()
			if err != nil {
				return err
			}
			var session *api.Session
			if sso {
				if username != "" || passwordStdin {
					return errors.New("--sso takes no --username or --password-stdin: the identity provider asks for what it needs")
				}
				if session, err = loginSSO(ctx, cmd.ErrOrStderr(), c); err != nil {
					return err
				}
			} else if session, err = loginPassword(ctx, cmd, c, username, passwordStdin); err != nil {
				return err
			}
			creds.Servers[c.BaseURL()] = savedSession{Token: session.Token, User: session.User, Expires: session.Expires}
			if err := creds.save(path); err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, session)
			}
			msg := fmt.Sprintf("Logged in to %s as %s (%s) until %s. The session token is saved in %s.\n",
				c.BaseURL(), session.User, session.Role, session.Expires.Format(timeLayout), path)
			if cfg.getenv(envToken) != "" {
				msg += envToken + " is set, and the commands use it before the saved token: unset it to use this session.\n"
			}
			_, err = fmt.Fprint(cmd.ErrOrStderr(), msg)
			return err
		}),
	}
	cmd.Flags().StringVarP(&username, "username", "u", "", "user name (asked for when not given)")
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from the first line of standard input")
	cmd.Flags().BoolVar(&sso, "sso", false, "sign in through the server's single sign-on provider, in a browser")
	return cmd
}

// loginPassword logs in with a user name (asked for when empty) and a
// password.
func loginPassword(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, username string, passwordStdin bool) (*api.Session, error) {
	in := bufio.NewReader(cmd.InOrStdin())
	if username == "" {
		fmt.Fprint(cmd.ErrOrStderr(), "Username: ")
		line, err := readLine(in)
		if err != nil {
			return nil, fmt.Errorf("reading the user name: %w", err)
		}
		username = line
	}
	password, err := readPassword(cmd, in, passwordStdin)
	if err != nil {
		return nil, err
	}
	return c.Login(ctx, username, password)
}

// readPassword reads the password from standard input (fromStdin) or,
// without echo, from the terminal.
func readPassword(cmd *cobra.Command, in *bufio.Reader, fromStdin bool) (string, error) {
	if fromStdin {
		pw, err := readLine(in)
		if err != nil {
			return "", fmt.Errorf("--password-stdin: %w", err)
		}
		return pw, nil
	}
	f, ok := cmd.InOrStdin().(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return "", errors.New("standard input is not a terminal to ask for the password on: pass it on standard input with --password-stdin")
	}
	fmt.Fprint(cmd.ErrOrStderr(), "Password: ")
	return readTerminal(cmd, f)
}

// readTerminal reads a password from the terminal f without echo.
func readTerminal(cmd *cobra.Command, f *os.File) (string, error) {
	pw, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(cmd.ErrOrStderr())
	if err != nil {
		return "", fmt.Errorf("reading the password: %w", err)
	}
	return string(pw), nil
}

// readLine reads one line without its line ending; an empty answer is an
// error.
func readLine(in *bufio.Reader) (string, error) {
	line, err := in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no answer")
	}
	return line, nil
}

// newLogoutCmd is `chime logout`: end the session and forget its token.
func newLogoutCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "End the session of --token, " + envToken + " or chime login, and remove the saved token",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			path, creds, err := cfg.credentials()
			if err != nil {
				return err
			}
			saved, haveSaved := creds.Servers[c.BaseURL()]
			token := firstNonEmpty(cfg.token, cfg.getenv(envToken), saved.Token)
			if token == "" {
				return fmt.Errorf("not logged in to %s: no --token, no %s and no session saved by chime login", c.BaseURL(), envToken)
			}
			logoutErr := c.WithToken(token).Logout(ctx)
			ended := "Logged out of " + c.BaseURL() + "."
			if apiclient.IsCode(logoutErr, api.CodeUnauthenticated) {
				ended = "The session had already ended."
				logoutErr = nil
			}
			removed := ""
			if haveSaved && saved.Token == token {
				delete(creds.Servers, c.BaseURL())
				if err := creds.save(path); err != nil {
					return errors.Join(logoutErr, err)
				}
				removed = " Removed its token from " + path + "."
			}
			if logoutErr != nil {
				if removed != "" {
					return fmt.Errorf("%s but the server did not end the session: %w", strings.TrimSpace(removed), logoutErr)
				}
				return logoutErr
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), ended+removed)
			return err
		}),
	}
}
