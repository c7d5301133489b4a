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

	"github.com/chime-scheduler/chime/apiclient"
)

// newLoginCmd is `chime login`: a session token for the other commands.
func newLoginCmd(cfg *clientConfig) *cobra.Command {
	var (
		username      string
		passwordStdin bool
	)
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Log in and print a session token to use as " + envToken,
		Long: `Log in with a user name and password and print the session token, as a
shell line that sets ` + envToken + `:

  eval "$(chime login --username admin)"

The password is asked for on the terminal, or read from the first line of
standard input with --password-stdin.`,
		Args: cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			in := bufio.NewReader(cmd.InOrStdin())
			if username == "" {
				fmt.Fprint(cmd.ErrOrStderr(), "Username: ")
				line, err := readLine(in)
				if err != nil {
					return fmt.Errorf("reading the user name: %w", err)
				}
				username = line
			}
			password, err := readPassword(cmd, in, passwordStdin)
			if err != nil {
				return err
			}
			session, err := c.Login(ctx, username, password)
			if err != nil {
				return err
			}
			if cfg.output == formatJSON {
				return writeJSON(cmd.OutOrStdout(), session)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Logged in to %s as %s (%s) until %s.\n",
				c.BaseURL(), session.User, session.Role, session.Expires.Format(timeLayout))
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "export %s=%s\n", envToken, session.Token)
			return err
		}),
	}
	cmd.Flags().StringVarP(&username, "username", "u", "", "user name (asked for when not given)")
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from the first line of standard input")
	return cmd
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

// newLogoutCmd is `chime logout`: end the session of --token.
func newLogoutCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "End the session whose token --token or " + envToken + " holds",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			if err := c.Logout(ctx); err != nil {
				return err
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "Logged out.")
			return err
		}),
	}
}
