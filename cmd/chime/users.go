package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server"
)

// newUsersCmd is `chime users`: the server's local users (admin only).
func newUsersCmd(cfg *clientConfig) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "users",
		Short: "List, create and delete users, change their role, job-group scopes, shell capability or password (admin only)",
	}
	cmd.AddCommand(newUsersListCmd(cfg), newUsersCreateCmd(cfg), newUsersDeleteCmd(cfg),
		newUsersSetRoleCmd(cfg), newUsersSetScopesCmd(cfg), newUsersSetShellCmd(cfg), newUsersPasswdCmd(cfg))
	return cmd
}

// newUsersListCmd is `chime users list`.
func newUsersListCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the users with their role, job-group scopes, shell capability and source (local or sso)",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			users, err := c.ListUsers(ctx)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, nonNil(users))
			}
			t := newTable(cmd.OutOrStdout(), "USER", "ROLE", "JOB GROUPS", "SHELL", "SOURCE", "CREATED").ifEmpty("no users")
			for _, u := range users {
				groups, source := "all", "local"
				if u.Scoped() {
					groups = u.ScopeList()
				}
				if u.Source != "" {
					source = u.Source
				}
				t.row(u.Name, string(u.Role), groups, yesNo(u.CanShell()), source, formatTime(u.Created))
			}
			return t.flush()
		}),
	}
}

// roleFlagUsage describes the values of the role flags and arguments.
const roleFlagUsage = "viewer, operator or admin"

// newUsersCreateCmd is `chime users create NAME --role ROLE`.
func newUsersCreateCmd(cfg *clientConfig) *cobra.Command {
	var (
		role          string
		passwordStdin bool
		shell         bool
		scopes        []string
	)
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a user; the password is asked for on the terminal, or read with --password-stdin",
		Example: `  chime users create ann --role operator
  chime users create bill --role operator --scope 'billing.*'
  printf '%s\n' "$PASSWORD" | chime users create ci --role viewer --password-stdin`,
		Args: cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			if role == "" {
				return fmt.Errorf("--role is required: %s", roleFlagUsage)
			}
			password, err := readNewPassword(cmd, passwordStdin)
			if err != nil {
				return err
			}
			req := api.User{Name: args[0], Role: api.Role(role), Password: password, Scopes: scopes}
			if shell {
				req.Shell = &shell
			}
			u, err := c.CreateUser(ctx, req)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, u)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Created user %s (%s).\n", u.Name, u.Role)
			return err
		}),
	}
	cmd.Flags().StringVar(&role, "role", "", "the user's role: "+roleFlagUsage)
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from the first line of standard input")
	cmd.Flags().BoolVar(&shell, "shell", false, "give the user the shell capability: with role operator or admin, it may write shell jobs")
	cmd.Flags().StringSliceVar(&scopes, "scope", nil, "limit an operator to the job groups these patterns match, such as billing.* (repeat or comma-separate; default: every group)")
	return cmd
}

// newUsersSetScopesCmd is `chime users set-scopes NAME [PATTERN...]`.
func newUsersSetScopesCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "set-scopes NAME [PATTERN...]",
		Short: "Limit an operator to the job groups the patterns match; no pattern: every group",
		Long: `Limit an operator to the job groups the patterns match (globs such as
billing.* or billing): it changes, runs and kills jobs only there, and reads
every other job as a viewer. With no pattern the operator reaches every
group again. The change applies at once to the user's sessions and tokens.
A single sign-on user's scopes are replaced at its next sign-on.`,
		Example: `  chime users set-scopes bill 'billing.*' payroll
  chime users set-scopes bill`,
		Args: cobra.MinimumNArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			u, err := c.UpdateUser(ctx, api.User{Name: args[0], Scopes: append([]string{}, args[1:]...)})
			if err != nil {
				return err
			}
			groups := "every job group"
			if u.Scoped() {
				groups = "job groups " + u.ScopeList()
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "User %s is now %s of %s.\n", u.Name, u.Role, groups)
			return err
		}),
	}
}

// yesNo is a capability in a table.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// newUsersDeleteCmd is `chime users delete NAME`.
func newUsersDeleteCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a user with its sessions and API tokens",
		Args:  cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			if err := c.DeleteUser(ctx, args[0]); err != nil {
				return err
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "Deleted user %s.\n", args[0])
			return err
		}),
	}
}

// newUsersSetRoleCmd is `chime users set-role NAME ROLE`.
func newUsersSetRoleCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "set-role NAME ROLE",
		Short: "Change a user's role (" + roleFlagUsage + ")",
		Args:  cobra.ExactArgs(2),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			if args[1] == "" {
				return fmt.Errorf("role: want %s", roleFlagUsage)
			}
			u, err := c.UpdateUser(ctx, api.User{Name: args[0], Role: api.Role(args[1])})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "User %s is now %s.\n", u.Name, u.Role)
			return err
		}),
	}
}

// newUsersSetShellCmd is `chime users set-shell NAME yes|no`.
func newUsersSetShellCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "set-shell NAME yes|no",
		Short: "Grant (yes) or revoke (no) a user's shell capability, which writing shell jobs needs",
		Long: `Grant (yes) or revoke (no) a user's shell capability. Shell jobs run commands
on the servers' hosts as the server's user: creating, changing or deleting
one, or running one with parameters, needs the role operator or admin and
this capability. A revocation applies at once to the user's sessions and
API tokens.`,
		Example: `  chime users set-shell ann yes`,
		Args:    cobra.ExactArgs(2),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			var shell bool
			switch args[1] {
			case "yes":
				shell = true
			case "no":
			default:
				return fmt.Errorf("set-shell %s %q: want yes or no", args[0], args[1])
			}
			u, err := c.UpdateUser(ctx, api.User{Name: args[0], Shell: &shell})
			if err != nil {
				return err
			}
			verb := "now has"
			if !u.CanShell() {
				verb = "no longer has"
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "User %s %s the shell capability.\n", u.Name, verb)
			return err
		}),
	}
}

// localActor is the actor the audit log records for a password set with
// database access only: no user was logged in.
const localActor = "database-access"

// newUsersPasswdCmd is `chime users passwd NAME`: over the API, or with
// --database-url straight on the database, for when no admin can log in.
func newUsersPasswdCmd(cfg *clientConfig) *cobra.Command {
	var (
		databaseURL   string
		passwordStdin bool
	)
	cmd := &cobra.Command{
		Use:   "passwd NAME",
		Short: "Set a user's password and end the user's sessions",
		Long: `Set a user's password and end the user's sessions; the user's API tokens
stay. The new password is asked for twice on the terminal, or read from the
first line of standard input with --password-stdin; never from the command
line.

Over the API it takes an admin. With --database-url it needs no server and
no login: it opens the database the way chime migrate does (creating or
upgrading chime's tables if needed) and sets the password there, so that
whoever can reach the database can recover a lost admin password. The audit
log records it as done by "` + localActor + `".`,
		Example: `  chime users passwd ann
  chime users passwd admin --database-url 'postgres://chime@db.example.com/chime'
  chime users passwd admin --database-url sqlite:/var/lib/chime/chime.db`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if databaseURL == "" {
				return cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
					password, err := readNewPassword(cmd, passwordStdin)
					if err != nil {
						return err
					}
					if _, err := c.UpdateUser(ctx, api.User{Name: args[0], Password: password}); err != nil {
						return err
					}
					_, err = fmt.Fprintf(cmd.OutOrStdout(), "Password of user %s changed; its sessions have ended.\n", args[0])
					return err
				})(cmd, args)
			}
			password, err := readNewPassword(cmd, passwordStdin)
			if err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			srv, err := server.New(cmd.Context(), server.Config{DatabaseURL: databaseURL, Logger: log})
			if err != nil {
				return err
			}
			defer srv.Close()
			if err := srv.SetPassword(cmd.Context(), localActor, args[0], password); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Password of user %s changed in %s; its sessions have ended.\n",
				args[0], redactURL(databaseURL))
			return err
		},
	}
	cmd.Flags().StringVar(&databaseURL, "database-url", "",
		"set the password straight in this database (sqlite:PATH, postgres://… or mysql://…) instead of over the API")
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from the first line of standard input")
	return cmd
}

// readNewPassword reads a new password from the first line of standard
// input (fromStdin) or, without echo, twice from the terminal, refusing
// two answers that differ.
func readNewPassword(cmd *cobra.Command, fromStdin bool) (string, error) {
	in := bufio.NewReader(cmd.InOrStdin())
	if fromStdin {
		return readPassword(cmd, in, true)
	}
	password, err := readPassword(cmd, in, false)
	if err != nil {
		return "", err
	}
	fmt.Fprint(cmd.ErrOrStderr(), "Again: ")
	f := cmd.InOrStdin().(*os.File) // readPassword checked it is a terminal
	again, err := readTerminal(cmd, f)
	if err != nil {
		return "", err
	}
	if again != password {
		return "", fmt.Errorf("the two passwords differ; nothing changed")
	}
	return password, nil
}
