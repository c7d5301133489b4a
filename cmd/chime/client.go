package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// Environment variables the client commands read when their flag is not
// given.
const (
	envServer = "CHIME_SERVER"
	envToken  = "CHIME_TOKEN"
)

// defaultServer is the server the client commands talk to when neither
// --server nor CHIME_SERVER says otherwise: a `chime server` started with
// no flags on this machine.
const defaultServer = "http://127.0.0.1:8080"

// newClientCmds are the commands that talk to a chime server over its
// API. They share the flags of clientConfig, and read the environment with
// getenv.
func newClientCmds(getenv func(string) string) []*cobra.Command {
	cfg := &clientConfig{getenv: getenv}
	cmds := []*cobra.Command{
		newJobsCmd(cfg),
		newApplyCmd(cfg),
		newExportCmd(cfg),
		newExecutionsCmd(cfg),
		newNodesCmd(cfg),
		newExecutorsCmd(cfg),
		newCalendarsCmd(cfg),
		newLoginCmd(cfg),
		newLogoutCmd(cfg),
		newUsersCmd(cfg),
		newTokensCmd(cfg),
		newSecretsCmd(cfg),
		newAuditCmd(cfg),
		newMaintenanceCmd(cfg),
		newPoolsCmd(cfg),
		newWorkflowsCmd(cfg),
	}
	for _, cmd := range cmds {
		cfg.addFlags(cmd)
	}
	return cmds
}

// clientConfig holds the flags every client command has: where the server
// is, how to authenticate, how to print.
type clientConfig struct {
	server string
	token  string
	output outputFormat
	getenv func(string) string
}

// addFlags adds --server, --token and -o to cmd and its subcommands.
func (cfg *clientConfig) addFlags(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&cfg.server, "server", "", fmt.Sprintf("server URL (env %s; default %s)", envServer, defaultServer))
	f.StringVar(&cfg.token, "token", "", fmt.Sprintf("API or session token (env %s; default: the one chime login saved for the server)", envToken))
	addOutputFlag(cmd, &cfg.output)
}

// client returns an API client for the flags, falling back to the
// environment, then to the session chime login saved for the server, then
// to the defaults.
func (cfg *clientConfig) client() (*apiclient.Client, error) {
	server := firstNonEmpty(cfg.server, cfg.getenv(envServer), defaultServer)
	c, err := apiclient.New(server, &apiclient.Options{UserAgent: "chime-cli"})
	if err != nil {
		return nil, fmt.Errorf("--server: %w", err)
	}
	token := firstNonEmpty(cfg.token, cfg.getenv(envToken))
	if token == "" {
		saved, err := cfg.savedSession(c.BaseURL())
		if err != nil {
			return nil, err
		}
		token = saved.Token
	}
	return c.WithToken(token), nil
}

// savedSession returns the session chime login saved for the server at
// baseURL, or the zero session.
func (cfg *clientConfig) savedSession(baseURL string) (savedSession, error) {
	_, creds, err := cfg.credentials()
	if err != nil {
		return savedSession{}, err
	}
	return creds.Servers[baseURL], nil
}

// credentials returns the path of the credentials file and what it holds.
func (cfg *clientConfig) credentials() (string, *credentials, error) {
	path, err := credentialsPath(cfg.getenv)
	if err != nil {
		return "", nil, err
	}
	creds, err := loadCredentials(path)
	return path, creds, err
}

// run adapts a function of an API client into a cobra RunE: it builds the
// client and adds a hint to the errors a person can fix by themselves.
func (cfg *clientConfig) run(fn func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := cfg.client()
		if err != nil {
			return err
		}
		return withHint(fn(cmd.Context(), cmd, c, args), c.BaseURL())
	}
}

// hintedError adds advice to an error, keeping it for errors.As.
type hintedError struct {
	err  error
	hint string
}

func (e *hintedError) Error() string { return e.err.Error() + "\n" + e.hint }
func (e *hintedError) Unwrap() error { return e.err }

// withHint adds advice to the errors that call for it: missing or stale
// credentials, and a server that is not there.
func withHint(err error, server string) error {
	switch {
	case err == nil:
		return nil
	case apiclient.IsCode(err, api.CodeUnauthenticated):
		return &hintedError{err, fmt.Sprintf("hint: log in with `chime login --server %s`, or pass an API token in %s or --token", server, envToken)}
	case apiclient.IsCode(err, api.CodePermissionDenied):
		return &hintedError{err, "hint: your role does not allow this; ask an admin"}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &hintedError{err, fmt.Sprintf("hint: is chime server running at %s? Point --server or %s at it", server, envServer)}
	}
	return err
}

// firstNonEmpty returns the first of values that is not empty.
func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// jobRef parses a job reference "group/name" from the arguments, given as
// one argument or as two ("group name").
func jobRef(args []string) (group, name string, err error) {
	switch len(args) {
	case 1:
		group, name, ok := strings.Cut(args[0], "/")
		if !ok || group == "" || name == "" {
			return "", "", fmt.Errorf("job %q: want GROUP/NAME", args[0])
		}
		return group, name, nil
	case 2:
		if args[0] == "" || args[1] == "" {
			return "", "", errors.New("want GROUP/NAME, or GROUP and NAME, both not empty")
		}
		return args[0], args[1], nil
	}
	return "", "", fmt.Errorf("want the job as GROUP/NAME, got %d arguments", len(args))
}

// jobArgs is the Args check of commands that take one job.
func jobArgs(_ *cobra.Command, args []string) error {
	_, _, err := jobRef(args)
	return err
}

// collect gathers up to limit items of seq, stopping at its first error.
func collect[T any](seq iter.Seq2[T, error], limit int) ([]T, error) {
	var items []T
	for item, err := range seq {
		if err != nil {
			return nil, err
		}
		items = append(items, item)
		if len(items) == limit {
			break
		}
	}
	return items, nil
}
