package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// newTokensCmd is `chime tokens`: API tokens for automation (admin only).
func newTokensCmd(cfg *clientConfig) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tokens",
		Short: "List, create and revoke API tokens (admin only)",
	}
	cmd.AddCommand(newTokensListCmd(cfg), newTokensCreateCmd(cfg), newTokensRevokeCmd(cfg))
	return cmd
}

// newTokensListCmd is `chime tokens list`.
func newTokensListCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the API tokens, without their secrets",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			tokens, err := c.ListTokens(ctx)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, nonNil(tokens))
			}
			t := newTable(cmd.OutOrStdout(), "ID", "NAME", "ROLE", "SHELL", "USER", "GROUPS", "CREATED", "LAST USED", "EXPIRES").ifEmpty("no tokens")
			for _, tok := range tokens {
				t.row(tok.ID, tok.Name, string(tok.Role), yesNo(tok.Shell), orDash(tok.User), orDash(strings.Join(tok.Groups, ",")),
					formatTime(tok.Created), formatTime(tok.LastUsed), formatTime(tok.Expires))
			}
			return t.flush()
		}),
	}
}

// newTokensCreateCmd is `chime tokens create NAME`.
func newTokensCreateCmd(cfg *clientConfig) *cobra.Command {
	var (
		role, user string
		expiresIn  time.Duration
		shell      bool
		groups     []string
	)
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create an API token and print its secret, shown this once",
		Long: `Create an API token and print its secret, which the server keeps only as a
hash: this is the one chance to copy it. The token acts for --user (you by
default) with --role (the user's by default, and never more than the
user's), and with the shell capability if --shell is given and its user
has it; use it as ` + envToken + ` or --token.

A token of role executor is what an executor process authenticates with
(see docs/executors.md): it serves the executor groups --group names, may
call only the executor protocol's routes, and must belong to an admin.`,
		Example: `  chime tokens create deploy-bot --role operator --expires-in 2160h
  chime tokens create billing-executor --role executor --group billing`,
		Args: cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			if expiresIn < 0 {
				return fmt.Errorf("--expires-in %v: want a positive duration, or none for a token that does not expire", expiresIn)
			}
			req := api.Token{Name: args[0], Role: api.Role(role), User: user, Shell: shell, Groups: groups}
			if expiresIn > 0 {
				at := time.Now().Add(expiresIn).UTC()
				req.Expires = &at
			}
			tok, err := c.CreateToken(ctx, req)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, tok)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Created token %s (ID %s, %s, for user %s, expires %s). Its secret, shown this once:\n",
				tok.Name, tok.ID, tok.Role, tok.User, expiresText(tok.Expires))
			_, err = fmt.Fprintln(cmd.OutOrStdout(), tok.Secret)
			return err
		}),
	}
	f := cmd.Flags()
	f.StringVar(&role, "role", "", "the token's role: "+roleFlagUsage+", or executor (default: its user's)")
	f.StringSliceVar(&groups, "group", nil, "for --role executor: an executor group the token serves; repeat or separate with commas for several")
	f.StringVar(&user, "user", "", "the user the token acts for (default: you)")
	f.DurationVar(&expiresIn, "expires-in", 0, "revoke the token by itself after this long, such as 720h (default: never)")
	f.BoolVar(&shell, "shell", false, "give the token the shell capability, which its user must have (to write shell jobs)")
	return cmd
}

// expiresText is when a token expires, in words.
func expiresText(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return formatTime(t)
}

// newTokensRevokeCmd is `chime tokens revoke ID`.
func newTokensRevokeCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API token by its ID (see chime tokens list)",
		Args:  cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			if err := c.DeleteToken(ctx, args[0]); err != nil {
				return err
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "Revoked token %s.\n", args[0])
			return err
		}),
	}
}
