package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server/secret"
)

// newSecretsCmd is `chime secrets`: named secrets for job and alert
// templates (admin only).
func newSecretsCmd(cfg *clientConfig) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secrets",
		Short: "Set, list and delete the secrets jobs use as {{secret \"name\"}} (admin only)",
		Long: `Secrets are values such as API tokens and webhook URLs that jobs and alert
webhooks use without showing them: write {{secret "name"}} in an http job's
URL, headers or body, a shell job's argv or env, or an alert webhook URL. The
server keeps them encrypted with its secret key (CHIME_SECRET_KEY or
secret_key_file; make one with chime secrets keygen) and reads them when a job
fires. No command or API answer ever shows a value again; the values a firing
used are masked in its recorded output.`,
	}
	cmd.AddCommand(newSecretsSetCmd(cfg), newSecretsListCmd(cfg), newSecretsDeleteCmd(cfg), newSecretsKeygenCmd())
	return cmd
}

// newSecretsSetCmd is `chime secrets set NAME`.
func newSecretsSetCmd(cfg *clientConfig) *cobra.Command {
	var fromFile string
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Create a secret or replace its value, read from standard input or a file",
		Long: `Create the secret NAME, or replace its value. The value is read from standard
input (asked for without echo on a terminal) or, with --from-file, from a
file; one final newline is dropped, as echo and editors add one. It is never
passed as an argument, which other users of the host could read.`,
		Example: `  chime secrets set billing-token < token.txt
  printf %s "$TOKEN" | chime secrets set billing-token
  chime secrets set slack-webhook --from-file /run/secrets/slack`,
		Args: cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			value, err := readSecretValue(cmd, fromFile)
			if err != nil {
				return err
			}
			sec, created, err := c.PutSecret(ctx, args[0], value)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, sec)
			}
			verb := "Replaced the value of"
			if created {
				verb = "Created"
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s secret %s (key %s).\n", verb, sec.Name, sec.KeyID)
			return err
		}),
	}
	cmd.Flags().StringVar(&fromFile, "from-file", "", "read the value from this file instead of standard input")
	return cmd
}

// readSecretValue reads a secret's value from path, or else from standard
// input, without echo when it is a terminal. One final newline is
// dropped; an empty value is an error.
func readSecretValue(cmd *cobra.Command, path string) (string, error) {
	var raw []byte
	var err error
	source := "standard input"
	switch f, ok := cmd.InOrStdin().(*os.File); {
	case path != "":
		source = path
		raw, err = os.ReadFile(path)
	case ok && term.IsTerminal(int(f.Fd())):
		fmt.Fprint(cmd.ErrOrStderr(), "Value (not shown): ")
		raw, err = term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
	default:
		raw, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), secret.MaxValueBytes+3))
	}
	if err != nil {
		return "", fmt.Errorf("reading the value from %s: %w", source, err)
	}
	value := strings.TrimSuffix(strings.TrimSuffix(string(raw), "\n"), "\r")
	if value == "" {
		return "", errors.New("the value read from " + source + " is empty")
	}
	return value, nil
}

// newSecretsListCmd is `chime secrets list`.
func newSecretsListCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the secrets, with who set them and the jobs that use them; never their values",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			list, err := c.ListSecrets(ctx)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, nonNil(list))
			}
			t := newTable(cmd.OutOrStdout(), "NAME", "KEY ID", "UPDATED", "BY", "USED BY").ifEmpty("no secrets")
			for _, s := range list {
				t.row(s.Name, s.KeyID, formatTime(s.Updated), orDash(s.UpdatedBy), orDash(strings.Join(s.UsedBy, ", ")))
			}
			return t.flush()
		}),
	}
}

// newSecretsDeleteCmd is `chime secrets delete NAME`.
func newSecretsDeleteCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a secret no job uses",
		Args:  cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			if err := c.DeleteSecret(ctx, args[0]); err != nil {
				return err
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "Deleted secret %s.\n", args[0])
			return err
		}),
	}
}

// newSecretsKeygenCmd is `chime secrets keygen`, which needs no server.
func newSecretsKeygenCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "keygen",
		Short: "Print a new random secret key for CHIME_SECRET_KEY or secret_key_file",
		Long: `Print a new random key (32 bytes, base64) for chime server's secret_key
setting: put it in CHIME_SECRET_KEY or in the file secret_key_file names, the
same on every node, and keep a copy: secrets set under a key cannot be read
without it. It talks to no server.`,
		Example: `  chime secrets keygen > /etc/chime/secret.key && chmod 600 /etc/chime/secret.key`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), secret.GenerateKey())
			return err
		},
	}
}
