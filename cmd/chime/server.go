package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/jobs/egress"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/auth"
	"github.com/chime-scheduler/chime/server/secret"
	"github.com/chime-scheduler/chime/server/sso"
)

// serverConfig is the configuration of `chime server` as the YAML file
// spells it; flags and CHIME_* variables set the same keys.
type serverConfig struct {
	Listen          string        `koanf:"listen"`
	DatabaseURL     string        `koanf:"database_url"`
	NodeID          string        `koanf:"node_id"`
	Workers         int           `koanf:"workers"`
	EnableShellJobs bool          `koanf:"enable_shell_jobs"`
	ShellAllow      []string      `koanf:"shell_allow"`
	EgressAllow     []string      `koanf:"egress_allow"`
	EgressDeny      []string      `koanf:"egress_deny"`
	NoJobMetrics    bool          `koanf:"no_job_metrics"`
	ShutdownTimeout time.Duration `koanf:"shutdown_timeout"`
	// AdminPassword, or the content of AdminPasswordFile, is the first
	// admin's password on a first start; loadServerConfig reads the file
	// into AdminPassword.
	AdminPassword     string `koanf:"admin_password"`
	AdminPasswordFile string `koanf:"admin_password_file"`
	// SecretKey, or the content of SecretKeyFile, encrypts secrets;
	// loadServerConfig reads the file into SecretKey.
	SecretKey     string `koanf:"secret_key"`
	SecretKeyFile string `koanf:"secret_key_file"`
	Retention     struct {
		MaxAge    time.Duration `koanf:"max_age"`
		PerJob    int           `koanf:"per_job"`
		MaxPerJob int           `koanf:"max_per_job"`
	} `koanf:"retention"`
	JobVersions int `koanf:"job_versions"`
	Cluster     struct {
		CheckInInterval  time.Duration `koanf:"check_in_interval"`
		DeadAfter        time.Duration `koanf:"dead_after"`
		MisfireThreshold time.Duration `koanf:"misfire_threshold"`
	} `koanf:"cluster"`
	Executors struct {
		Lease time.Duration `koanf:"lease"`
	} `koanf:"executors"`
	SMTP struct {
		Host     string `koanf:"host"`
		Port     int    `koanf:"port"`
		Username string `koanf:"username"`
		Password string `koanf:"password"`
		From     string `koanf:"from"`
		TLS      string `koanf:"tls"`
		Auth     string `koanf:"auth"`
	} `koanf:"smtp"`
	Alerts struct {
		Emails   []string `koanf:"emails"`
		Webhooks []string `koanf:"webhooks"`
		Slack    []string `koanf:"slack"`
		Teams    []string `koanf:"teams"`
		// PagerDutyKeys are routing keys of PagerDuty services that
		// receive every alert at severity error; PagerDutyURL is the
		// Events API v2 endpoint.
		PagerDutyKeys []string      `koanf:"pagerduty_keys"`
		PagerDutyURL  string        `koanf:"pagerduty_url"`
		RateLimit     time.Duration `koanf:"rate_limit"`
		Lease         time.Duration `koanf:"lease"`
		// Templates of alert e-mails and webhook texts (text/template over
		// alert.TemplateData); empty for the defaults.
		SubjectTemplate string `koanf:"subject_template"`
		BodyTemplate    string `koanf:"body_template"`
		TextTemplate    string `koanf:"text_template"`
	} `koanf:"alerts"`
	// SSO is single sign-on through an OpenID Connect provider, on when
	// Issuer is set; loadServerConfig reads ClientSecretFile into
	// ClientSecret.
	SSO struct {
		Issuer           string   `koanf:"issuer"`
		ClientID         string   `koanf:"client_id"`
		ClientSecret     string   `koanf:"client_secret"`
		ClientSecretFile string   `koanf:"client_secret_file"`
		RedirectURL      string   `koanf:"redirect_url"`
		Scopes           []string `koanf:"scopes"`
		GroupsClaim      string   `koanf:"groups_claim"`
		UserClaim        string   `koanf:"user_claim"`
		Name             string   `koanf:"name"`
		Roles            []string `koanf:"roles"`
	} `koanf:"sso"`
	Log struct {
		Level  string `koanf:"level"`
		Format string `koanf:"format"`
	} `koanf:"log"`
}

// stringArray is the default of a list setting whose flag takes one
// entry per use, commas and quotes included (pflag's StringArray), where
// a []string default's flag splits its values as CSV.
type stringArray []string

// serverSetting is one setting of `chime server`: its dotted key in the
// YAML file, its flag and, derived from the key, its environment variable
// (smtp.host is --smtp-host and CHIME_SMTP_HOST).
type serverSetting struct {
	key   string
	flag  string
	def   any // string, int, bool, time.Duration, []string or stringArray: the flag's type
	usage string
	// mask says how the effective configuration log shows the value.
	mask func(string) string
}

// envName returns the setting's environment variable.
func (s serverSetting) envName() string {
	return "CHIME_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(s.key))
}

// configFileEnv names the YAML file when --config is not given.
const configFileEnv = "CHIME_CONFIG"

// serverSettings lists every setting, in the order of --help.
func serverSettings() []serverSetting {
	return []serverSetting{
		{key: "listen", flag: "listen", def: server.DefaultListen, usage: "address the HTTP API listens on"},
		{key: "database_url", flag: "database-url", def: server.DefaultDatabaseURL, mask: maskURL,
			usage: "database: sqlite:PATH, postgres://… or mysql://…; servers on one PostgreSQL or MySQL database form a cluster"},
		{key: "node_id", flag: "node-id", def: "", usage: "this node's ID in the cluster (default: host name and a random suffix)"},
		{key: "workers", flag: "workers", def: 10, usage: "jobs this node runs at once"},
		{key: "enable_shell_jobs", flag: "enable-shell-jobs", def: false, usage: "allow jobs of type shell, which run commands on this host as this server's user (needs --shell-allow)"},
		{key: "shell_allow", flag: "shell-allow", def: []string(nil),
			usage: `programs shell jobs may run: absolute paths or globs such as /opt/jobs/bin/*, or "*" for any (repeat or comma-separate)`},
		{key: "egress_allow", flag: "egress-allow", def: []string(nil),
			usage: "hosts, *.domains, IPs and CIDRs HTTP jobs and alert webhooks may reach although loopback, link-local and private addresses are refused by default (repeat or comma-separate)"},
		{key: "egress_deny", flag: "egress-deny", def: []string(nil),
			usage: "hosts, *.domains, IPs and CIDRs HTTP jobs and alert webhooks never reach, whatever egress_allow says (repeat or comma-separate)"},
		{key: "no_job_metrics", flag: "no-job-metrics", def: false, usage: "leave out the per-job series of /metrics (up to 7 per job that ran)"},
		{key: "shutdown_timeout", flag: "shutdown-timeout", def: server.DefaultShutdownTimeout, usage: "how long a stop waits for running jobs before cancelling them"},
		{key: "admin_password", flag: "admin-password", def: "", mask: maskSecret,
			usage: "the first admin's password on a first start, instead of a random one printed once (prefer CHIME_ADMIN_PASSWORD or --admin-password-file)"},
		{key: "admin_password_file", flag: "admin-password-file", def: "",
			usage: "file holding the first admin's password, such as a Docker or Kubernetes secret (a final newline is ignored)"},
		{key: "secret_key", flag: "secret-key", def: "", mask: maskSecret,
			usage: "key that encrypts secrets ({{secret \"name\"}}), the base64 of 32 bytes from chime secrets keygen, the same on every node (prefer CHIME_SECRET_KEY or --secret-key-file; none: secrets cannot be set or read)"},
		{key: "secret_key_file", flag: "secret-key-file", def: "",
			usage: "file holding the secret key, such as a Docker or Kubernetes secret"},
		{key: "retention.max_age", flag: "retention-max-age", def: server.DefaultRetentionAge, usage: "executions older than this are pruned, unless among their job's per_job newest"},
		{key: "retention.per_job", flag: "retention-per-job", def: server.DefaultRetentionPerJob, usage: "newest executions of each job kept however old (default lowered to max_per_job when that is less)"},
		{key: "retention.max_per_job", flag: "retention-max-per-job", def: server.DefaultRetentionMaxPerJob, usage: "newest executions of each job kept at most, however young (-1: no cap)"},
		{key: "job_versions", flag: "job-versions", def: server.DefaultJobVersions, usage: "versions of each job kept (chime jobs versions); older ones are deleted as changes come"},
		{key: "cluster.check_in_interval", flag: "check-in-interval", def: 2 * time.Second, usage: "how often the node renews its cluster lease"},
		{key: "cluster.dead_after", flag: "dead-after", def: time.Duration(0), usage: "silence after which a node is declared dead (default 3 × check-in interval)"},
		{key: "cluster.misfire_threshold", flag: "misfire-threshold", def: time.Minute, usage: "how late a firing may be before its misfire instruction applies"},
		{key: "executors.lease", flag: "executor-lease", def: server.DefaultExecutorLease,
			usage: "how long an executor keeps its runs without a heartbeat before they are lost (at least 1s)"},
		{key: "smtp.host", flag: "smtp-host", def: "", usage: "SMTP server for alert e-mails (none: no e-mail)"},
		{key: "smtp.port", flag: "smtp-port", def: 0, usage: "SMTP port (default 587 for starttls, 465 for tls, 25 for none)"},
		{key: "smtp.username", flag: "smtp-username", def: "", usage: "SMTP user name (none: no AUTH)"},
		{key: "smtp.password", flag: "smtp-password", def: "", mask: maskSecret, usage: "SMTP password (prefer CHIME_SMTP_PASSWORD or the config file)"},
		{key: "smtp.from", flag: "smtp-from", def: "", usage: `sender of alert e-mails, such as "chime <chime@example.com>"`},
		{key: "smtp.tls", flag: "smtp-tls", def: alert.TLSStartTLS, usage: "starttls, tls or none"},
		{key: "smtp.auth", flag: "smtp-auth", def: alert.AuthAuto, usage: "auto, plain or login"},
		{key: "alerts.emails", flag: "alert-email", def: []string(nil), usage: "default alert e-mail recipients (repeat or comma-separate)"},
		{key: "alerts.webhooks", flag: "alert-webhook", def: []string(nil), mask: maskWebhook, usage: "default alert webhook URLs (repeat or comma-separate)"},
		{key: "alerts.slack", flag: "alert-slack", def: []string(nil), mask: maskWebhook, usage: "default Slack incoming webhook URLs (repeat or comma-separate)"},
		{key: "alerts.teams", flag: "alert-teams", def: []string(nil), mask: maskWebhook, usage: "default Microsoft Teams incoming webhook URLs (repeat or comma-separate)"},
		{key: "alerts.pagerduty_keys", flag: "alert-pagerduty-key", def: []string(nil), mask: maskSecret,
			usage: "routing keys of PagerDuty Events API v2 integrations that receive every alert (prefer CHIME_ALERTS_PAGERDUTY_KEYS or the config file)"},
		{key: "alerts.pagerduty_url", flag: "alert-pagerduty-url", def: alert.DefaultPagerDutyURL, usage: "PagerDuty Events API v2 endpoint"},
		{key: "alerts.rate_limit", flag: "alert-rate-limit", def: 10 * time.Minute, usage: "least time between two alerts of one kind for one job"},
		{key: "alerts.subject_template", flag: "alert-subject-template", def: "", usage: "template of alert e-mail subjects (see go doc ./server/alert)"},
		{key: "alerts.body_template", flag: "alert-body-template", def: "", usage: "template of alert e-mail bodies"},
		{key: "alerts.text_template", flag: "alert-text-template", def: "", usage: "template of the text of alert webhooks"},
		{key: "alerts.lease", flag: "alert-lease", def: server.DefaultAlertLease,
			usage: "how long a node holds an alert it claimed before another node may send it: the longest a node's death delays an alert (more than twice the alert timeout)"},
		{key: "sso.issuer", flag: "sso-issuer", def: "",
			usage: "issuer URL of an OpenID Connect provider for single sign-on, such as https://keycloak.example.com/realms/acme (none: local users only)"},
		{key: "sso.client_id", flag: "sso-client-id", def: "", usage: "chime's client ID at the provider"},
		{key: "sso.client_secret", flag: "sso-client-secret", def: "", mask: maskSecret,
			usage: "chime's client secret at the provider (prefer CHIME_SSO_CLIENT_SECRET or --sso-client-secret-file)"},
		{key: "sso.client_secret_file", flag: "sso-client-secret-file", def: "", usage: "file holding the client secret, such as a Docker or Kubernetes secret"},
		{key: "sso.redirect_url", flag: "sso-redirect-url", def: "",
			usage: "the server's external URL followed by /auth/oidc/callback, registered at the provider"},
		{key: "sso.scopes", flag: "sso-scope", def: []string(nil), usage: "OAuth 2.0 scopes to ask for (default openid,profile,email; add the one that puts groups in the ID token)"},
		{key: "sso.groups_claim", flag: "sso-groups-claim", def: sso.DefaultGroupsClaim, usage: "ID token claim that lists the user's groups"},
		{key: "sso.user_claim", flag: "sso-user-claim", def: sso.DefaultUserClaim, usage: "ID token claim that names the chime user (lower-cased)"},
		{key: "sso.name", flag: "sso-name", def: "", usage: `provider name on the login page, "Sign in with NAME" (default: the issuer's host)`},
		{key: "sso.roles", flag: "sso-role", def: stringArray(nil),
			usage: `role mappings, repeatable: 'group "ops" -> admin', 'group "billing-team" -> operator of billing.*', 'group "*" -> viewer' (several job-group patterns: separate them with spaces)`},
		{key: "log.level", flag: "log-level", def: "info", usage: "debug, info, warn or error"},
		{key: "log.format", flag: "log-format", def: "text", usage: "text or json"},
	}
}

// newServerCmd is the `chime server` command.
func newServerCmd() *cobra.Command {
	settings := serverSettings()
	var configFile string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run a scheduler node with its HTTP API",
		Long: `Run a chime server node: the scheduler, its REST API on --listen, the execution
history, retries, alerts and metrics (/metrics).

With no flags it runs on the SQLite file chime.db. Give --database-url a
postgres:// or mysql:// URL and run any number of nodes on it: they form a
cluster and share the work.

Every setting can come from a flag, a CHIME_* environment variable, or a YAML
file (--config or CHIME_CONFIG) whose keys are the dotted names below (smtp.host
is "smtp:" then "host:"). A flag beats a variable, which beats the file, which
beats the default. The effective configuration is logged at start: each
setting with the value the node runs with (defaults resolved) and where it came
from, secrets masked. With --log-format json, an error that stops the server is
a JSON log record too.

HTTP jobs and alert webhooks may not reach loopback, link-local (cloud
metadata), private or other internal addresses, nor "localhost", unless
egress_allow lists them (--egress-allow 127.0.0.1,10.0.0.0/8,*.corp.example.com);
egress_deny refuses more, and beats egress_allow. Every connection they make
is checked, redirects included, and they use no proxy (HTTP_PROXY is ignored
for them).

The server listens on its address before it touches the database: a port
already taken stops it with an error naming the address, and changes
nothing. On its first start on an empty database it then creates the user
"admin" with a random password and prints it once, to standard error; with
admin_password or admin_password_file set, the admin gets that password and
nothing is printed.

Settings (key, environment variable):
` + settingsTable(settings),
		Example: `  chime server
  chime server --database-url postgres://chime@db/chime --node-id node-1
  CHIME_SMTP_PASSWORD=… chime server --config /etc/chime/server.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stderr := cmd.ErrOrStderr()
			cfg, sources, err := loadServerConfig(cmd.Flags(), settings, configFile, os.LookupEnv)
			if err != nil {
				return reportFatal(cfg, stderr, err)
			}
			if err := runServer(cmd.Context(), cfg, sources, settings, cfg.logger(stderr), stderr); err != nil {
				return reportFatal(cfg, stderr, err)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&configFile, "config", "", "YAML configuration file (or "+configFileEnv+")")
	for _, s := range settings {
		switch def := s.def.(type) {
		case string:
			fs.String(s.flag, def, s.usage)
		case int:
			fs.Int(s.flag, def, s.usage)
		case bool:
			fs.Bool(s.flag, def, s.usage)
		case time.Duration:
			fs.Duration(s.flag, def, s.usage)
		case []string:
			fs.StringSlice(s.flag, def, s.usage)
		case stringArray:
			fs.StringArray(s.flag, def, s.usage)
		default:
			panic(fmt.Sprintf("chime server: setting %s has a default of unsupported type %T", s.key, s.def))
		}
	}
	return cmd
}

// settingsTable lists the settings' keys and variables for --help.
func settingsTable(settings []serverSetting) string {
	var b strings.Builder
	for _, s := range settings {
		fmt.Fprintf(&b, "  %-28s %s\n", s.key, s.envName())
	}
	return b.String()
}

// Where a setting's value came from.
const (
	sourceDefault = "default"
	sourceFile    = "file"
	sourceEnv     = "env"
	sourceFlag    = "flag"
)

// loadServerConfig merges the settings: a changed flag beats an
// environment variable, which beats the YAML file (configFile, else
// $CHIME_CONFIG), which beats the default. It returns the configuration
// and where each key's value came from. lookupEnv reads the environment.
// A configuration that merges but is not valid is returned with the
// error, so that the error can be reported in its log format.
func loadServerConfig(fs *pflag.FlagSet, settings []serverSetting, configFile string, lookupEnv func(string) (string, bool)) (*serverConfig, map[string]string, error) {
	k := koanf.New(".")
	sources := make(map[string]string, len(settings))
	defaults := make(map[string]any, len(settings))
	for _, s := range settings {
		defaults[s.key] = s.def
		sources[s.key] = sourceDefault
	}
	if err := k.Load(confmap.Provider(defaults, "."), nil); err != nil {
		return nil, nil, fmt.Errorf("chime server: defaults: %w", err)
	}

	if configFile == "" {
		configFile, _ = lookupEnv(configFileEnv)
	}
	if configFile != "" {
		fk := koanf.New(".")
		if err := fk.Load(file.Provider(configFile), yaml.Parser()); err != nil {
			return nil, nil, fmt.Errorf("chime server: config file %s: %w", configFile, err)
		}
		known := make(map[string]bool, len(settings))
		for _, s := range settings {
			known[s.key] = true
		}
		for _, key := range fk.Keys() {
			if !known[key] {
				return nil, nil, fmt.Errorf("chime server: config file %s: unknown setting %q", configFile, key)
			}
			sources[key] = sourceFile
		}
		if err := k.Merge(fk); err != nil {
			return nil, nil, fmt.Errorf("chime server: config file %s: %w", configFile, err)
		}
	}

	env := make(map[string]any)
	for _, s := range settings {
		if v, ok := lookupEnv(s.envName()); ok {
			env[s.key] = v
			sources[s.key] = sourceEnv
		}
	}
	if err := k.Load(confmap.Provider(env, "."), nil); err != nil {
		return nil, nil, fmt.Errorf("chime server: environment: %w", err)
	}

	byFlag := make(map[string]string, len(settings))
	for _, s := range settings {
		byFlag[s.flag] = s.key
	}
	flags := posflag.ProviderWithFlag(fs, ".", nil, func(f *pflag.Flag) (string, any) {
		key, ok := byFlag[f.Name]
		if !ok || !f.Changed {
			return "", nil
		}
		sources[key] = sourceFlag
		return key, posflag.FlagVal(fs, f)
	})
	if err := k.Load(flags, nil); err != nil {
		return nil, nil, fmt.Errorf("chime server: flags: %w", err)
	}

	var cfg serverConfig
	err := k.UnmarshalWithConf("", &cfg, koanf.UnmarshalConf{DecoderConfig: &mapstructure.DecoderConfig{
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			mapstructure.StringToSliceHookFunc(","),
		),
		WeaklyTypedInput: true,
		ErrorUnused:      true,
		Result:           &cfg,
		TagName:          "koanf",
	}})
	if err != nil {
		return nil, nil, fmt.Errorf("chime server: configuration: %w", err)
	}
	if sources["retention.per_job"] == sourceDefault && cfg.Retention.MaxPerJob > 0 {
		// As in server.Retention, the floor's default follows a lower cap.
		cfg.Retention.PerJob = min(cfg.Retention.PerJob, cfg.Retention.MaxPerJob)
	}
	if err := cfg.readAdminPassword(); err != nil {
		return &cfg, nil, err
	}
	if err := cfg.readSecretKey(); err != nil {
		return &cfg, nil, err
	}
	if err := cfg.readSSOClientSecret(); err != nil {
		return &cfg, nil, err
	}
	if err := cfg.validate(); err != nil {
		return &cfg, nil, err
	}
	return &cfg, sources, nil
}

// readAdminPassword reads admin_password_file into AdminPassword. Setting
// both is an error.
func (c *serverConfig) readAdminPassword() error {
	if c.AdminPasswordFile == "" {
		return nil
	}
	if c.AdminPassword != "" {
		return errors.New("chime server: admin_password and admin_password_file are both set: set one")
	}
	raw, err := os.ReadFile(c.AdminPasswordFile)
	if err != nil {
		return fmt.Errorf("chime server: admin_password_file: %w", err)
	}
	// Secrets written with echo or an editor end with a newline that is
	// not part of the password.
	c.AdminPassword = strings.TrimSuffix(strings.TrimSuffix(string(raw), "\n"), "\r")
	if c.AdminPassword == "" {
		return fmt.Errorf("chime server: admin_password_file %s is empty", c.AdminPasswordFile)
	}
	return nil
}

// readSecretKey reads secret_key_file into SecretKey. Setting both is an
// error.
func (c *serverConfig) readSecretKey() error {
	if c.SecretKeyFile == "" {
		return nil
	}
	if c.SecretKey != "" {
		return errors.New("chime server: secret_key and secret_key_file are both set: set one")
	}
	raw, err := os.ReadFile(c.SecretKeyFile)
	if err != nil {
		return fmt.Errorf("chime server: secret_key_file: %w", err)
	}
	c.SecretKey = strings.TrimSpace(string(raw))
	if c.SecretKey == "" {
		return fmt.Errorf("chime server: secret_key_file %s is empty", c.SecretKeyFile)
	}
	return nil
}

// readSSOClientSecret reads sso.client_secret_file into
// SSO.ClientSecret. Setting both is an error.
func (c *serverConfig) readSSOClientSecret() error {
	if c.SSO.ClientSecretFile == "" {
		return nil
	}
	if c.SSO.ClientSecret != "" {
		return errors.New("chime server: sso.client_secret and sso.client_secret_file are both set: set one")
	}
	raw, err := os.ReadFile(c.SSO.ClientSecretFile)
	if err != nil {
		return fmt.Errorf("chime server: sso.client_secret_file: %w", err)
	}
	c.SSO.ClientSecret = strings.TrimSpace(string(raw))
	if c.SSO.ClientSecret == "" {
		return fmt.Errorf("chime server: sso.client_secret_file %s is empty", c.SSO.ClientSecretFile)
	}
	return nil
}

// ssoRules parses sso.roles.
func (c *serverConfig) ssoRules() ([]sso.Rule, error) {
	var rules []sso.Rule
	for i, s := range c.SSO.Roles {
		r, err := sso.ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("chime server: sso.roles[%d]: %w", i, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// validate checks what the server would otherwise only refuse later, or
// not at all.
func (c *serverConfig) validate() error {
	if c.AdminPassword != "" {
		if err := auth.ValidatePassword(c.AdminPassword); err != nil {
			key := "admin_password"
			if c.AdminPasswordFile != "" {
				key = "admin_password_file " + c.AdminPasswordFile
			}
			var e *api.Error
			if errors.As(err, &e) {
				return fmt.Errorf("chime server: %s: the password %s", key, e.Message)
			}
			return fmt.Errorf("chime server: %s: %w", key, err)
		}
	}
	if c.SecretKey != "" {
		if _, err := secret.ParseKey(c.SecretKey); err != nil {
			key := "secret_key"
			if c.SecretKeyFile != "" {
				key = "secret_key_file " + c.SecretKeyFile
			}
			return fmt.Errorf("chime server: %s: %w", key, err)
		}
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("chime server: log.level %q: want debug, info, warn or error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		return fmt.Errorf("chime server: log.format %q: want text or json", c.Log.Format)
	}
	if _, err := egress.New(egress.Config{Allow: c.EgressAllow, Deny: c.EgressDeny}); err != nil {
		if re, ok := errors.AsType[*egress.RuleError](err); ok {
			key := map[string]string{"Allow": "egress_allow", "Deny": "egress_deny"}[re.List]
			return fmt.Errorf("chime server: %s[%d] %q: %s", key, re.Index, re.Entry, re.Reason)
		}
		return fmt.Errorf("chime server: %w", err)
	}
	if c.Workers < 1 {
		return fmt.Errorf("chime server: workers %d: want at least 1", c.Workers)
	}
	if _, err := c.ssoRules(); err != nil {
		return err
	}
	if c.SSO.Issuer == "" && (c.SSO.ClientID != "" || len(c.SSO.Roles) > 0) {
		return errors.New("chime server: sso.client_id or sso.roles is set without sso.issuer: set the provider's issuer URL")
	}
	if c.JobVersions < 1 {
		return fmt.Errorf("chime server: job_versions %d: want at least 1", c.JobVersions)
	}
	r := c.Retention
	switch {
	case r.PerJob < 0:
		return fmt.Errorf("chime server: retention.per_job %d is negative", r.PerJob)
	case r.MaxPerJob != server.NoRetentionCap && r.MaxPerJob < 1:
		return fmt.Errorf("chime server: retention.max_per_job %d: want %d (no cap) or at least 1", r.MaxPerJob, server.NoRetentionCap)
	case r.MaxPerJob != server.NoRetentionCap && r.PerJob > r.MaxPerJob:
		return fmt.Errorf("chime server: retention.per_job %d is more than retention.max_per_job %d", r.PerJob, r.MaxPerJob)
	}
	return c.validateLeases()
}

// validateLeases checks executors.lease and alerts.lease as the server
// would, naming the key instead of the server's field.
func (c *serverConfig) validateLeases() error {
	if c.Executors.Lease < time.Second {
		return fmt.Errorf("chime server: executors.lease %s: want at least 1s", c.Executors.Lease)
	}
	// The alert timeout has no setting: the server uses its default.
	if timeout := (alert.Config{}).WithDefaults().Timeout; c.Alerts.Lease <= 2*timeout {
		return fmt.Errorf("chime server: alerts.lease %s: want more than twice the alert timeout (%s)", c.Alerts.Lease, timeout)
	}
	return nil
}

// logger returns the server's logger, writing to w.
func (c *serverConfig) logger(w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Log.Level)) // validated
	opts := &slog.HandlerOptions{Level: level}
	if c.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// toServer returns the server package's configuration.
func (c *serverConfig) toServer(log *slog.Logger) server.Config {
	return server.Config{
		DatabaseURL:       c.DatabaseURL,
		Listen:            c.Listen,
		NodeID:            c.NodeID,
		Workers:           c.Workers,
		EnableShellJobs:   c.EnableShellJobs,
		ShellAllow:        c.ShellAllow,
		Egress:            egress.Config{Allow: c.EgressAllow, Deny: c.EgressDeny},
		DisableJobMetrics: c.NoJobMetrics,
		ShutdownTimeout:   c.ShutdownTimeout,
		AdminPassword:     c.AdminPassword,
		SecretKey:         c.SecretKey,
		Retention:         server.Retention{MaxAge: c.Retention.MaxAge, PerJob: c.Retention.PerJob, MaxPerJob: c.Retention.MaxPerJob},
		JobVersions:       c.JobVersions,
		CheckInInterval:   c.Cluster.CheckInInterval,
		DeadAfter:         c.Cluster.DeadAfter,
		MisfireThreshold:  c.Cluster.MisfireThreshold,
		ExecutorLease:     c.Executors.Lease,
		AlertLease:        c.Alerts.Lease,
		Alert: alert.Config{
			SMTP: alert.SMTPConfig{
				Host: c.SMTP.Host, Port: c.SMTP.Port, Username: c.SMTP.Username, Password: c.SMTP.Password,
				From: c.SMTP.From, TLS: c.SMTP.TLS, Auth: c.SMTP.Auth,
			},
			DefaultEmails:    c.Alerts.Emails,
			DefaultWebhooks:  c.Alerts.Webhooks,
			DefaultSlack:     c.Alerts.Slack,
			DefaultTeams:     c.Alerts.Teams,
			DefaultPagerDuty: pagerDutyDefaults(c.Alerts.PagerDutyKeys),
			PagerDutyURL:     c.Alerts.PagerDutyURL,
			RateLimit:        alert.RateLimit{Per: c.Alerts.RateLimit},
			SubjectTemplate:  c.Alerts.SubjectTemplate,
			BodyTemplate:     c.Alerts.BodyTemplate,
			TextTemplate:     c.Alerts.TextTemplate,
		},
		SSO:    c.ssoConfig(),
		Logger: log,
	}
}

// ssoConfig returns the single sign-on configuration, nil when
// sso.issuer is not set. The rules have been validated.
func (c *serverConfig) ssoConfig() *sso.Config {
	if c.SSO.Issuer == "" {
		return nil
	}
	rules, _ := c.ssoRules()
	return &sso.Config{
		Issuer:       c.SSO.Issuer,
		ClientID:     c.SSO.ClientID,
		ClientSecret: c.SSO.ClientSecret,
		RedirectURL:  c.SSO.RedirectURL,
		Scopes:       c.SSO.Scopes,
		GroupsClaim:  c.SSO.GroupsClaim,
		UserClaim:    c.SSO.UserClaim,
		Name:         c.SSO.Name,
		Rules:        rules,
	}
}

// pagerDutyDefaults are the PagerDuty services of the routing keys keys,
// at the default severity.
func pagerDutyDefaults(keys []string) []alert.PagerDutyTarget {
	var out []alert.PagerDutyTarget
	for _, k := range keys {
		out = append(out, alert.PagerDutyTarget{RoutingKey: k})
	}
	return out
}

// runServer listens, opens (and migrates) the database, logs the
// effective configuration, creates the first admin on an empty database
// (printing its password once to stderr unless the configuration set it)
// and runs the node until ctx ends. It listens first so that a port
// already taken stops it before the database is touched: a first admin
// created by a process that then failed would have had its password
// printed once, by a process nobody watched succeed.
func runServer(ctx context.Context, cfg *serverConfig, sources map[string]string, settings []serverSetting, log *slog.Logger, stderr io.Writer) error {
	ln, err := server.Listen(cfg.Listen)
	if err != nil {
		return err
	}
	srv, err := server.New(ctx, cfg.toServer(log))
	if err != nil {
		_ = ln.Close()
		return err
	}
	logEffectiveConfig(ctx, log, cfg, srv.Config(), sources, settings)
	password, created, err := srv.BootstrapAdmin(ctx)
	if err != nil {
		_ = ln.Close()
		_ = srv.Close()
		return err
	}
	switch {
	case created && password != "":
		fmt.Fprintf(stderr, "\nFirst start: created the user \"admin\" with the password\n\n    %s\n\n"+
			"It is shown only this once. Log in with `chime login` and change it.\n\n", password)
	case !created && cfg.AdminPassword != "":
		log.Info("users exist, so admin_password is not applied; it sets the first admin's password only")
	}
	return srv.Serve(ctx, ln)
}

// fatalError is an error that stopped `chime server` and was already
// reported as a log record; main exits non-zero without printing it again.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// reportFatal reports an error that stops `chime server`. With
// log.format json it is written as a JSON log record at level ERROR, so
// that every line the server writes parses, and returned as a
// *fatalError; otherwise it is returned as it is, for main to print. cfg
// may be nil, or not valid, when the configuration is what failed.
func reportFatal(cfg *serverConfig, stderr io.Writer, err error) error {
	if cfg == nil || cfg.Log.Format != "json" {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	log.Error("chime server stopped on an error", "error", err.Error())
	return &fatalError{err: err}
}

// logEffectiveConfig logs the value of every setting the server runs
// with, its defaults resolved (the node ID, dead_after, the SMTP port…),
// masked where secret, as one attribute per key with the value and where
// it came from.
func logEffectiveConfig(ctx context.Context, log *slog.Logger, cfg *serverConfig, run server.Config, sources map[string]string, settings []serverSetting) {
	values := effectiveValues(cfg, run)
	attrs := make([]slog.Attr, 0, len(settings))
	for _, s := range settings {
		v := values[s.key]
		if s.mask != nil {
			v = maskValue(v, s.mask)
		}
		attrs = append(attrs, slog.Group(s.key, slog.Any("value", v), slog.String("from", sources[s.key])))
	}
	log.LogAttrs(ctx, slog.LevelInfo, "effective configuration", attrs...)
}

// effectiveValues returns each setting's value, by key: what the server
// runs with (run, the server's configuration with its defaults applied)
// where the server resolves it, else what cfg says. Durations are text,
// such as "6s".
func effectiveValues(cfg *serverConfig, run server.Config) map[string]slog.Value {
	d := func(v time.Duration) slog.Value { return slog.StringValue(v.String()) }
	str := slog.StringValue
	al := run.Alert.WithDefaults()
	return map[string]slog.Value{
		"listen":                    str(run.Listen),
		"database_url":              str(run.DatabaseURL),
		"node_id":                   str(run.NodeID),
		"workers":                   slog.IntValue(run.Workers),
		"enable_shell_jobs":         slog.BoolValue(run.EnableShellJobs),
		"shell_allow":               slog.AnyValue(nonNil(run.ShellAllow)),
		"egress_allow":              slog.AnyValue(nonNil(cfg.EgressAllow)),
		"egress_deny":               slog.AnyValue(nonNil(cfg.EgressDeny)),
		"no_job_metrics":            slog.BoolValue(run.DisableJobMetrics),
		"shutdown_timeout":          d(run.ShutdownTimeout),
		"admin_password":            str(cfg.AdminPassword),
		"admin_password_file":       str(cfg.AdminPasswordFile),
		"secret_key":                str(cfg.SecretKey),
		"secret_key_file":           str(cfg.SecretKeyFile),
		"retention.max_age":         d(run.Retention.MaxAge),
		"retention.per_job":         slog.IntValue(run.Retention.PerJob),
		"retention.max_per_job":     slog.IntValue(run.Retention.MaxPerJob),
		"job_versions":              slog.IntValue(run.JobVersions),
		"cluster.check_in_interval": d(run.CheckInInterval),
		"cluster.dead_after":        d(run.DeadAfter),
		"cluster.misfire_threshold": d(run.MisfireThreshold),
		"executors.lease":           d(run.ExecutorLease),
		"smtp.host":                 str(al.SMTP.Host),
		"smtp.port":                 slog.IntValue(al.SMTP.Port),
		"smtp.username":             str(al.SMTP.Username),
		"smtp.password":             str(al.SMTP.Password),
		"smtp.from":                 str(al.SMTP.From),
		"smtp.tls":                  str(al.SMTP.TLS),
		"smtp.auth":                 str(al.SMTP.Auth),
		"alerts.emails":             slog.AnyValue(nonNil(cfg.Alerts.Emails)),
		"alerts.webhooks":           slog.AnyValue(nonNil(cfg.Alerts.Webhooks)),
		"alerts.slack":              slog.AnyValue(nonNil(cfg.Alerts.Slack)),
		"alerts.teams":              slog.AnyValue(nonNil(cfg.Alerts.Teams)),
		"alerts.pagerduty_keys":     slog.AnyValue(nonNil(cfg.Alerts.PagerDutyKeys)),
		"alerts.pagerduty_url":      str(al.PagerDutyURL),
		"alerts.rate_limit":         d(al.RateLimit.Per),
		// Templates are logged as given: empty is the built-in one.
		"alerts.subject_template": str(cfg.Alerts.SubjectTemplate),
		"alerts.body_template":    str(cfg.Alerts.BodyTemplate),
		"alerts.text_template":    str(cfg.Alerts.TextTemplate),
		"alerts.lease":            d(run.AlertLease),
		"sso.issuer":              str(cfg.SSO.Issuer),
		"sso.client_id":           str(cfg.SSO.ClientID),
		"sso.client_secret":       str(cfg.SSO.ClientSecret),
		"sso.client_secret_file":  str(cfg.SSO.ClientSecretFile),
		"sso.redirect_url":        str(cfg.SSO.RedirectURL),
		"sso.scopes":              slog.AnyValue(nonNil(cfg.SSO.Scopes)),
		"sso.groups_claim":        str(cfg.SSO.GroupsClaim),
		"sso.user_claim":          str(cfg.SSO.UserClaim),
		"sso.name":                str(cfg.SSO.Name),
		"sso.roles":               slog.AnyValue(nonNil(cfg.SSO.Roles)),
		"log.level":               str(cfg.Log.Level),
		"log.format":              str(cfg.Log.Format),
	}
}

// maskValue applies mask to a text value, or to each text of a list.
func maskValue(v slog.Value, mask func(string) string) slog.Value {
	if list, ok := v.Any().([]string); ok {
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = mask(s)
		}
		return slog.AnyValue(out)
	}
	return slog.StringValue(mask(v.String()))
}

// maskSecret hides a secret, showing only whether it is set.
func maskSecret(v string) string {
	if v == "" {
		return ""
	}
	return "********"
}

// maskURL hides the password of a URL; a URL that does not parse is
// hidden whole when it may hold a password.
func maskURL(v string) string {
	u, err := url.Parse(v)
	switch {
	case err == nil && u.User != nil:
		return u.Redacted()
	case err == nil:
		return v
	case strings.Contains(v, "@"):
		return "********"
	}
	return v
}

// maskWebhook hides the path and query of a webhook URL, which for Slack
// and many others are the secret.
func maskWebhook(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return "********"
	}
	return u.Scheme + "://" + u.Host + "/********"
}
