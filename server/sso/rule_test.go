package sso

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chime-scheduler/chime/api"
)

func TestParseRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     Rule
		err      string
	}{
		{name: "admin", in: `group "ops" -> admin`, want: Rule{Group: "ops", Role: api.RoleAdmin}},
		{name: "scoped", in: `group "billing-team" -> operator of billing.*`,
			want: Rule{Group: "billing-team", Role: api.RoleOperator, Scopes: []string{"billing.*"}}},
		{name: "several patterns", in: `group data -> operator of etl, reports.*  archive`,
			want: Rule{Group: "data", Role: api.RoleOperator, Scopes: []string{"etl", "reports.*", "archive"}}},
		{name: "everyone", in: `  group "*"->viewer `, want: Rule{Group: "*", Role: api.RoleViewer}},
		{name: "quoted space", in: `group "Billing Team" -> viewer`, want: Rule{Group: "Billing Team", Role: api.RoleViewer}},
		{name: "no arrow", in: `group ops admin`, err: `want the form: group "NAME" -> ROLE`},
		{name: "unknown role", in: `group ops -> root`, err: `unknown role "root"`},
		{name: "scoped admin", in: `group ops -> admin of billing.*`, err: "only an operator can be limited to job groups, and this rule gives admin"},
		{name: "scoped viewer", in: `group ops -> viewer of billing.*`, err: "only an operator can be limited to job groups, and this rule gives viewer"},
		{name: "bad glob", in: `group ops -> operator of billing[`, err: "not a valid glob"},
		{name: "slash", in: `group ops -> operator of a/b`, err: "contains '/'"},
		{name: "empty group", in: `group "" -> viewer`, err: "the group is empty"},
	} {
		got, err := ParseRule(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: ParseRule(%q) = %v, %v; want an error with %q", tc.name, tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: ParseRule(%q): %v", tc.name, tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: ParseRule(%q) (-want +got):\n%s", tc.name, tc.in, diff)
		}
		if again, err := ParseRule(got.String()); err != nil || !cmp.Equal(again, got) {
			t.Errorf("%s: ParseRule(%q) = %v, %v; want it back", tc.name, got.String(), again, err)
		}
	}
}

func TestMapRole(t *testing.T) {
	t.Parallel()
	var rules []Rule
	for _, s := range []string{
		`group "ops" -> admin`,
		`group "billing-team" -> operator of billing.*`,
		`group "payroll-team" -> operator of payroll`,
		`group "sre" -> operator`,
		`group "staff" -> viewer`,
	} {
		r, err := ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	for _, tc := range []struct {
		name   string
		rules  []Rule
		groups []string
		role   api.Role
		scopes []string
	}{
		{name: "highest role wins", groups: []string{"staff", "billing-team", "ops"}, role: api.RoleAdmin},
		{name: "scoped operator", groups: []string{"staff", "billing-team"}, role: api.RoleOperator, scopes: []string{"billing.*"}},
		{name: "scopes add up", groups: []string{"payroll-team", "billing-team"}, role: api.RoleOperator, scopes: []string{"billing.*", "payroll"}},
		{name: "an unscoped grant lifts the scopes", groups: []string{"billing-team", "sre"}, role: api.RoleOperator},
		{name: "viewer", groups: []string{"staff"}, role: api.RoleViewer},
		{name: "everyone", rules: append(rules[:len(rules):len(rules)], Rule{Group: "*", Role: api.RoleViewer}), role: api.RoleViewer},
		{name: "no match", groups: []string{"marketing"}},
	} {
		rs := rules
		if tc.rules != nil {
			rs = tc.rules
		}
		role, scopes, err := mapRole(rs, "ann@example.com", tc.groups)
		if tc.role == "" {
			var nr *NoRoleError
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), "ann@example.com (groups marketing) has no role in chime") {
				t.Errorf("%s: mapRole = %q %v, %v; want a NoRoleError", tc.name, role, scopes, err)
			}
			continue
		}
		if err != nil || role != tc.role || !cmp.Equal(scopes, tc.scopes) {
			t.Errorf("%s: mapRole(%v) = %q %v, %v; want %q %v", tc.name, tc.groups, role, scopes, err, tc.role, tc.scopes)
		}
	}
}

func TestConfigRefused(t *testing.T) {
	t.Parallel()
	good := Config{
		Issuer: "https://idp.example.com/realms/acme", ClientID: "chime",
		RedirectURL: "https://chime.example.com/auth/oidc/callback",
		Rules:       []Rule{{Group: "*", Role: api.RoleViewer}},
	}
	if _, err := good.withDefaults(); err != nil {
		t.Fatalf("a good config: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		err    string
	}{
		{"no issuer", func(c *Config) { c.Issuer = "" }, "Config.Issuer is required"},
		{"issuer not a URL", func(c *Config) { c.Issuer = "idp.example.com" }, "is not an http(s) URL"},
		{"no client", func(c *Config) { c.ClientID = "" }, "Config.ClientID is required"},
		{"no redirect", func(c *Config) { c.RedirectURL = "" }, "Config.RedirectURL is required"},
		{"redirect elsewhere", func(c *Config) { c.RedirectURL = "https://chime.example.com/callback" }, "followed by /auth/oidc/callback"},
		{"no rules", func(c *Config) { c.Rules = nil }, "at least one role mapping is required"},
		{"bad rule", func(c *Config) { c.Rules = []Rule{{Group: "x", Role: "root"}} }, `Config.Rules[0]`},
	} {
		c := good
		tc.change(&c)
		if _, err := c.withDefaults(); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: withDefaults = %v, want an error with %q", tc.name, err, tc.err)
		}
	}
}

func TestConfigLogMasksTheSecret(t *testing.T) {
	t.Parallel()
	c := Config{Issuer: "https://idp.example.com", ClientID: "chime", ClientSecret: "s3cret-value"}
	got := c.LogValue().String()
	if strings.Contains(got, "s3cret-value") || !strings.Contains(got, "client_secret=********") {
		t.Errorf("LogValue = %s, want the secret masked", got)
	}
}
