package sso

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// Defaults of Config.
const (
	// DefaultGroupsClaim is the ID token claim that lists the user's
	// groups.
	DefaultGroupsClaim = "groups"
	// DefaultUserClaim is the ID token claim that names the chime user.
	DefaultUserClaim = "email"
)

// DefaultScopes are the OAuth 2.0 scopes the login asks for.
var defaultScopes = []string{"openid", "profile", "email"}

// Routes the provider serves.
const (
	// LoginPath starts a sign-on.
	LoginPath = "/auth/oidc/login"
	// CallbackPath is where the identity provider sends the browser back;
	// Config.RedirectURL must end with it.
	CallbackPath = "/auth/oidc/callback"
)

// Config configures single sign-on with an OpenID Connect provider.
type Config struct {
	// Issuer is the provider's issuer URL, whose
	// /.well-known/openid-configuration describes it, such as
	// https://keycloak.example.com/realms/acme or
	// https://accounts.google.com. Required.
	Issuer string
	// ClientID and ClientSecret are chime's client at the provider.
	// ClientID is required; the secret is never logged.
	ClientID     string
	ClientSecret string
	// RedirectURL is the callback URL registered at the provider: the
	// server's external URL followed by /auth/oidc/callback. Required.
	RedirectURL string
	// Scopes are the OAuth 2.0 scopes asked for; "openid" is added if
	// missing. Providers that put groups in the ID token only on request
	// need theirs here (Keycloak's client scope, "groups" for Dex).
	// Defaults to openid, profile and email.
	Scopes []string
	// GroupsClaim is the ID token claim listing the user's groups (an
	// array of strings, or one string). Defaults to DefaultGroupsClaim,
	// "groups".
	GroupsClaim string
	// UserClaim is the ID token claim whose value is the chime user name,
	// such as "email" or "preferred_username". Defaults to
	// DefaultUserClaim, "email".
	UserClaim string
	// Name is the provider's name on the login page: "Sign in with
	// <Name>". Defaults to the issuer's host name.
	Name string
	// Rules map the provider's groups to chime roles (see ParseRule). At
	// least one is required; a user none matches is refused.
	Rules []Rule
	// HTTPClient talks to the provider. Defaults to a client with a
	// 30-second timeout.
	HTTPClient *http.Client
	// Logger receives refused sign-ons. Defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock ID tokens are checked against. Defaults to
	// time.Now.
	Now func() time.Time
}

// LogValue logs the configuration with the client secret masked.
func (c Config) LogValue() slog.Value {
	secret := ""
	if c.ClientSecret != "" {
		secret = "********"
	}
	return slog.GroupValue(
		slog.String("issuer", c.Issuer), slog.String("client_id", c.ClientID),
		slog.String("client_secret", secret), slog.String("redirect_url", c.RedirectURL),
		slog.Any("scopes", c.Scopes), slog.String("groups_claim", c.GroupsClaim),
		slog.String("user_claim", c.UserClaim), slog.Int("rules", len(c.Rules)))
}

// withDefaults returns a copy of c with the defaults applied, or an error
// naming the first field it cannot use.
func (c Config) withDefaults() (Config, error) {
	issuer, err := url.Parse(c.Issuer)
	switch {
	case c.Issuer == "":
		return c, fmt.Errorf("sso: Config.Issuer is required")
	case err != nil || (issuer.Scheme != "https" && issuer.Scheme != "http") || issuer.Host == "":
		return c, fmt.Errorf("sso: Config.Issuer %q is not an http(s) URL", c.Issuer)
	case c.ClientID == "":
		return c, fmt.Errorf("sso: Config.ClientID is required")
	case c.RedirectURL == "":
		return c, fmt.Errorf("sso: Config.RedirectURL is required: the server's external URL followed by %s", CallbackPath)
	case len(c.Rules) == 0:
		return c, fmt.Errorf(`sso: Config.Rules: at least one role mapping is required, such as: group "*" -> viewer`)
	}
	redirect, err := url.Parse(c.RedirectURL)
	if err != nil || (redirect.Scheme != "https" && redirect.Scheme != "http") || redirect.Host == "" || redirect.Path != CallbackPath {
		return c, fmt.Errorf("sso: Config.RedirectURL %q: want the server's external http(s) URL followed by %s", c.RedirectURL, CallbackPath)
	}
	for i, r := range c.Rules {
		if err := r.validate(); err != nil {
			return c, fmt.Errorf("sso: Config.Rules[%d] (%s): %w", i, r, err)
		}
	}
	c.Scopes = slices.Clone(c.Scopes)
	if len(c.Scopes) == 0 {
		c.Scopes = slices.Clone(defaultScopes)
	}
	if !slices.Contains(c.Scopes, "openid") {
		c.Scopes = append([]string{"openid"}, c.Scopes...)
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = DefaultGroupsClaim
	}
	if c.UserClaim == "" {
		c.UserClaim = DefaultUserClaim
	}
	if c.Name == "" {
		c.Name = issuer.Hostname()
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}
