package egress_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chime-scheduler/chime/jobs/egress"
)

func newPolicy(t *testing.T, cfg egress.Config) *egress.Policy {
	t.Helper()
	p, err := egress.New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return p
}

func TestNewRefusesWhatIsNotARule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, entry, reason string
	}{
		{"empty", " ", "empty"},
		{"URL", "http://example.com", "a URL"},
		{"lone star", "*", "lone *"},
		{"bad CIDR", "10.0.0.0/33", "not a CIDR network"},
		{"port", "example.com:80", "ports are not part of a rule"},
		{"address and port", "127.0.0.1:8080", "ports are not part of a rule"},
		{"inner star", "a.*.example.com", "a * may only start an entry"},
		{"space", "exa mple.com", `' ' is not allowed`},
		{"empty label", "example..com", "empty label"},
		{"short address", "10.0.1", "looks like an IP address"},
		{"zone", "fe80::1%eth0", "zone"},
		{"short mapped network", "::ffff:0:0/80", "IPv4-mapped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := egress.New(egress.Config{Allow: []string{"10.0.0.0/8", tt.entry}})
			re, ok := errors.AsType[*egress.RuleError](err)
			if !ok {
				t.Fatalf("New: %v, want a *RuleError", err)
			}
			if re.List != "Allow" || re.Index != 1 || re.Entry != tt.entry || !strings.Contains(re.Reason, tt.reason) {
				t.Errorf("New: %+v, want Allow[1] %q with a reason holding %q", re, tt.entry, tt.reason)
			}
		})
	}
	_, err := egress.New(egress.Config{Deny: []string{"bad entry"}})
	if re, ok := errors.AsType[*egress.RuleError](err); !ok || re.List != "Deny" || !strings.HasPrefix(err.Error(), `egress: Deny[0] "bad entry": `) {
		t.Errorf("New with a bad Deny entry: %v", err)
	}
}

func TestCheckHost(t *testing.T) {
	t.Parallel()
	type verdict struct {
		rule, rng string // the RefusedError's Rule and Range; both empty: allowed
	}
	allowed := verdict{}
	byDefault := func(rng string) verdict { return verdict{rng: rng} }
	byRule := func(rule string) verdict { return verdict{rule: rule} }
	tests := []struct {
		name  string
		cfg   egress.Config
		hosts map[string]verdict
	}{
		{
			name: "defaults",
			hosts: map[string]verdict{
				"127.0.0.1":           byDefault("loopback"),
				"127.8.9.10":          byDefault("loopback"),
				"::1":                 byDefault("loopback"),
				"localhost":           byDefault("loopback"),
				"LocalHost.":          byDefault("loopback"),
				"app.localhost":       byDefault("loopback"),
				"169.254.169.254":     byDefault("link-local"),
				"fe80::1":             byDefault("link-local"),
				"fe80::1%eth0":        byDefault("link-local"),
				"10.1.2.3":            byDefault("private"),
				"172.16.0.1":          byDefault("private"),
				"172.31.255.255":      byDefault("private"),
				"192.168.1.1":         byDefault("private"),
				"fc00::1":             byDefault("private"),
				"fd12:3456::1":        byDefault("private"),
				"fec0::1":             byDefault("private"),
				"0.0.0.0":             byDefault("unspecified"),
				"0.1.2.3":             byDefault("unspecified"),
				"::":                  byDefault("unspecified"),
				"::ffff:127.0.0.1":    byDefault("loopback"),
				"::ffff:169.254.1.1":  byDefault("link-local"),
				"::ffff:10.0.0.1":     byDefault("private"),
				"64:ff9b::7f00:1":     byDefault("loopback"),
				"100.64.0.1":          byDefault("shared (carrier-grade NAT)"),
				"100.100.100.200":     byDefault("shared (carrier-grade NAT)"),
				"224.0.0.1":           byDefault("multicast"),
				"ff02::1":             byDefault("multicast"),
				"255.255.255.255":     byDefault("broadcast"),
				"8.8.8.8":             allowed,
				"172.32.0.1":          allowed,
				"100.128.0.1":         allowed,
				"2606:4700::1111":     allowed,
				"::ffff:8.8.8.8":      allowed,
				"example.com":         allowed,
				"localhost.example":   allowed,
				"metrics.internal.io": allowed, // names are resolved only when dialled
			},
		},
		{
			name: "allow networks and names",
			cfg:  egress.Config{Allow: []string{"127.0.0.1/32", "10.0.0.0/8", "::1", "*.corp.example", "localhost"}},
			hosts: map[string]verdict{
				"127.0.0.1":        allowed,
				"::ffff:127.0.0.1": allowed,
				"127.0.0.2":        byDefault("loopback"),
				"::1":              allowed,
				"10.200.0.1":       allowed,
				"192.168.0.1":      byDefault("private"),
				"localhost":        allowed,
				"db.corp.example":  allowed,
				"a.b.corp.example": allowed,
				"corp.example":     allowed, // not refused by name, and not resolved
				"app.localhost":    allowed, // 127.0.0.1 is allowed
			},
		},
		{
			name: "deny beats allow",
			cfg: egress.Config{
				Allow: []string{"10.0.0.0/8", "*.corp.example"},
				Deny:  []string{"10.0.0.5", "vault.corp.example", "*.evil.example", "8.8.0.0/16"},
			},
			hosts: map[string]verdict{
				"10.0.0.4":           allowed,
				"10.0.0.5":           byRule("10.0.0.5"),
				"::ffff:10.0.0.5":    byRule("10.0.0.5"),
				"db.corp.example":    allowed,
				"vault.corp.example": byRule("vault.corp.example"),
				"VAULT.corp.example": byRule("vault.corp.example"),
				"x.y.evil.example":   byRule("*.evil.example"),
				"evil.example":       allowed, // a wildcard holds the subdomains only
				"8.8.8.8":            byRule("8.8.0.0/16"),
				"8.9.8.8":            allowed,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newPolicy(t, tt.cfg)
			for host, want := range tt.hosts {
				err := p.CheckHost(host)
				var got verdict
				if err != nil {
					re, ok := errors.AsType[*egress.RefusedError](err)
					if !ok {
						t.Errorf("CheckHost(%q): %v, want a *RefusedError", host, err)
						continue
					}
					got = verdict{rule: re.Rule, rng: re.Range}
				}
				if got != want {
					t.Errorf("CheckHost(%q) = %+v (%v), want %+v", host, got, err, want)
				}
			}
		})
	}
}

func TestRefusedErrorSaysHowToAllow(t *testing.T) {
	t.Parallel()
	p := newPolicy(t, egress.Config{AllowSetting: "egress_allow", Deny: []string{"*.evil.example"}})
	for host, want := range map[string]string{
		"127.0.0.1":      "egress to 127.0.0.1 refused: loopback addresses are denied by default; allow with egress_allow",
		"localhost":      "egress to localhost refused: loopback addresses are denied by default; allow with egress_allow",
		"a.evil.example": `egress to a.evil.example refused: denied by the rule "*.evil.example"`,
	} {
		if err := p.CheckHost(host); err == nil || err.Error() != want {
			t.Errorf("CheckHost(%q) = %v, want %q", host, err, want)
		}
	}
	if err := newPolicy(t, egress.Config{}).CheckHost("10.0.0.1"); err == nil || !strings.HasSuffix(err.Error(), "; allow with an allow rule") {
		t.Errorf("CheckHost without AllowSetting = %v", err)
	}
}

// target is a real HTTP server counting its requests.
type target struct {
	*httptest.Server
	hits atomic.Int64
}

// newTarget starts a server on addr ("127.0.0.1:0") answering "ok", or
// redirecting to redirect when that is set.
func newTarget(t *testing.T, addr, redirect string) *target {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	tg := &target{}
	tg.Server = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.hits.Add(1)
		if redirect != "" {
			http.Redirect(w, r, redirect, http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})}}
	tg.Start()
	t.Cleanup(tg.Close)
	return tg
}

// get fetches u through p's client and returns the body.
func get(t *testing.T, p *egress.Policy, u string) (string, error) {
	t.Helper()
	c, err := p.Client(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// wantRefused checks that err is a refusal of host with range rng or rule.
func wantRefused(t *testing.T, err error, host, rng, rule string) *egress.RefusedError {
	t.Helper()
	re, ok := errors.AsType[*egress.RefusedError](err)
	if !ok {
		t.Fatalf("error %v, want a *RefusedError", err)
	}
	if re.Host != host || re.Range != rng || re.Rule != rule {
		t.Errorf("refused host %q, range %q, rule %q; want %q, %q, %q (%v)", re.Host, re.Range, re.Rule, host, rng, rule, err)
	}
	return re
}

func TestClientRefusesLoopbackByDefault(t *testing.T) {
	t.Parallel()
	tg := newTarget(t, "127.0.0.1:0", "")
	u, _ := url.Parse(tg.URL)

	_, err := get(t, newPolicy(t, egress.Config{AllowSetting: "egress_allow"}), tg.URL)
	re := wantRefused(t, err, "127.0.0.1", "loopback", "")
	if re.Addr != u.Host {
		t.Errorf("refused address %q, want %q", re.Addr, u.Host)
	}
	want := "egress to " + u.Host + " refused: loopback addresses are denied by default; allow with egress_allow"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want it to say %q", err, want)
	}
	if n := tg.hits.Load(); n != 0 {
		t.Errorf("the server saw %d requests, want none", n)
	}

	for _, allow := range []string{"127.0.0.1", "127.0.0.0/8", "::ffff:127.0.0.1/128"} {
		body, err := get(t, newPolicy(t, egress.Config{Allow: []string{allow}}), tg.URL)
		if err != nil || body != "ok" {
			t.Errorf("with Allow %s: %q, %v; want ok", allow, body, err)
		}
	}
	_, err = get(t, newPolicy(t, egress.Config{Allow: []string{"127.0.0.0/8"}, Deny: []string{"127.0.0.1/32"}}), tg.URL)
	wantRefused(t, err, "127.0.0.1", "", "127.0.0.1/32")
}

func TestClientChecksTheResolvedAddress(t *testing.T) {
	t.Parallel()
	tg := newTarget(t, "127.0.0.1:0", "")
	u, _ := url.Parse(tg.URL)
	byName := "http://localhost:" + u.Port() + "/"

	// CheckHost passes a name it has no rule for; the dialled address
	// decides.
	p := newPolicy(t, egress.Config{})
	if err := p.CheckHost("app.internal.example"); err != nil {
		t.Fatalf("CheckHost: %v", err)
	}
	_, err := get(t, p, byName)
	wantRefused(t, err, "localhost", "loopback", "")
	if !strings.Contains(err.Error(), "egress to localhost (") {
		t.Errorf("error %q does not name the host and its address", err)
	}

	// An allowed name allows what it resolves to, unless a Deny network
	// holds it.
	if body, err := get(t, newPolicy(t, egress.Config{Allow: []string{"localhost"}}), byName); err != nil || body != "ok" {
		t.Errorf("with Allow localhost: %q, %v; want ok", body, err)
	}
	_, err = get(t, newPolicy(t, egress.Config{Allow: []string{"localhost"}, Deny: []string{"127.0.0.0/8", "::1"}}), byName)
	if _, ok := errors.AsType[*egress.RefusedError](err); !ok {
		t.Errorf("with Allow localhost and Deny 127.0.0.0/8, ::1: %v, want a refusal", err)
	}
	_, err = get(t, newPolicy(t, egress.Config{Allow: []string{"127.0.0.0/8", "::1"}, Deny: []string{"LOCALHOST"}}), byName)
	wantRefused(t, err, "localhost", "", "LOCALHOST")
	if n := tg.hits.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want 1", n)
	}
}

func TestClientChecksEveryRedirect(t *testing.T) {
	t.Parallel()
	inner := newTarget(t, "127.0.0.1:0", "")
	innerURL, _ := url.Parse(inner.URL)

	// An allowed name redirecting to a loopback address.
	outer := newTarget(t, "127.0.0.1:0", inner.URL+"/metrics")
	outerURL, _ := url.Parse(outer.URL)
	p := newPolicy(t, egress.Config{Allow: []string{"localhost"}})
	_, err := get(t, p, "http://localhost:"+outerURL.Port()+"/")
	re := wantRefused(t, err, "127.0.0.1", "loopback", "")
	if re.Addr != innerURL.Host {
		t.Errorf("refused %q, want the redirect's %q", re.Addr, innerURL.Host)
	}
	// An allowed address redirecting to a name a Deny rule names.
	outer2 := newTarget(t, "127.0.0.1:0", "http://metrics.localhost:"+innerURL.Port()+"/metrics")
	p = newPolicy(t, egress.Config{Allow: []string{"127.0.0.1"}, Deny: []string{"*.localhost"}})
	_, err = get(t, p, outer2.URL)
	wantRefused(t, err, "metrics.localhost", "", "*.localhost")

	if n := outer.hits.Load() + outer2.hits.Load(); n != 2 {
		t.Errorf("the redirecting servers saw %d requests, want 2", n)
	}
	if n := inner.hits.Load(); n != 0 {
		t.Errorf("the redirects' target saw %d requests, want none", n)
	}
}

func TestTransportUsesNoProxy(t *testing.T) {
	t.Parallel()
	tg := newTarget(t, "127.0.0.1:0", "")
	proxy := newTarget(t, "127.0.0.1:0", "")
	proxyURL, _ := url.Parse(proxy.URL)
	p := newPolicy(t, egress.Config{Allow: []string{"127.0.0.1"}})
	c, err := p.Client(&http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(tg.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if tg.hits.Load() != 1 || proxy.hits.Load() != 0 {
		t.Errorf("target saw %d requests, proxy %d; want 1 and 0", tg.hits.Load(), proxy.hits.Load())
	}
}

// roundTripFunc is an http.RoundTripper that is not an *http.Transport.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestClientRefusesATransportItCannotCheck(t *testing.T) {
	t.Parallel()
	p := newPolicy(t, egress.Config{})
	_, err := p.Client(&http.Client{Transport: roundTripFunc(http.DefaultTransport.RoundTrip)})
	if err == nil || !strings.Contains(err.Error(), "only an *http.Transport") {
		t.Errorf("Client: %v, want it refused", err)
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	p := newPolicy(t, egress.Config{Allow: []string{"10.0.0.7"}})
	for raw, refused := range map[string]bool{
		"http://127.0.0.1:8080/metrics":       true,
		"https://[::1]/":                      true,
		"http://user:pw@169.254.169.254/meta": true,
		"http://LOCALHOST./x":                 true,
		"http://127.0.0.1/{{.JobName}}":       true,
		"http://10.0.0.7:9000/":               false,
		"https://example.com/hook":            false,
		"http://{{.Params.host}}/x":           false, // decided when it is dialled
		"{{.Params.base}}/x":                  false,
		"not a url at all":                    false,
	} {
		err := p.CheckURL(raw)
		if _, ok := errors.AsType[*egress.RefusedError](err); ok != refused || (err != nil && !ok) {
			t.Errorf("CheckURL(%q) = %v, want refused %v", raw, err, refused)
		}
	}
	var none *egress.Policy
	if err := none.CheckURL("http://127.0.0.1/"); err != nil {
		t.Errorf("a nil Policy's CheckURL = %v, want nil", err)
	}
}
