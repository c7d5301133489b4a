package auth

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestLoginBackoff checks the wait after each failed login: none while
// failures are free, then doubling from a second up to the cap.
func TestLoginBackoff(t *testing.T) {
	t.Parallel()
	want := map[int]time.Duration{
		0: 0, 4: 0, 5: time.Second, 6: 2 * time.Second, 8: 8 * time.Second,
		10: 32 * time.Second, 11: MaxLoginBackoff, 50: MaxLoginBackoff, 1 << 30: MaxLoginBackoff,
	}
	for failures, w := range want {
		if got := loginBackoff(failures, 5); got != w {
			t.Errorf("loginBackoff(%d, 5) = %s, want %s", failures, got, w)
		}
	}
	for d, w := range map[time.Duration]time.Duration{0: 0, time.Millisecond: time.Second, time.Second: time.Second, 1500 * time.Millisecond: 2 * time.Second} {
		if got := ceilSecond(d); got != w {
			t.Errorf("ceilSecond(%s) = %s, want %s", d, got, w)
		}
	}
}

// TestAddressKey checks which client addresses share a rate limit.
func TestAddressKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"192.0.2.1:5000":             "192.0.2.1",
		"192.0.2.1":                  "192.0.2.1",
		"[::ffff:192.0.2.1]:80":      "192.0.2.1",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"2001:db8:1:2::9":            "2001:db8:1:2::/64",
		"[fe80::1%eth0]:22":          "fe80::/64",
		"unix-socket":                "unix-socket",
		"":                           "",
	} {
		if got := addressKey(in); got != want {
			t.Errorf("addressKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRandomPassword checks the generated passwords' length and alphabet.
func TestRandomPassword(t *testing.T) {
	t.Parallel()
	seen := map[byte]bool{}
	for range 200 {
		p := randomPassword(20)
		if len(p) != 20 {
			t.Fatalf("randomPassword(20) = %q, %d characters", p, len(p))
		}
		for i := range len(p) {
			if !strings.ContainsRune(passwordAlphabet, rune(p[i])) {
				t.Fatalf("randomPassword(20) = %q holds %q", p, p[i])
			}
			seen[p[i]] = true
		}
	}
	// 4000 draws from 62 characters: missing one has a chance of about 1e-26.
	if len(seen) != len(passwordAlphabet) {
		t.Errorf("200 passwords use %d of the %d characters", len(seen), len(passwordAlphabet))
	}
}

// TestOptions checks defaults and the errors naming a bad field.
func TestOptions(t *testing.T) {
	t.Parallel()
	o, err := (*Options)(nil).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.SessionTTL != DefaultSessionTTL || o.SessionMaxAge != DefaultSessionMaxAge || o.BcryptCost != bcrypt.DefaultCost ||
		o.LoginFailuresPerUser != 5 || o.LoginFailuresPerAddress != 20 || o.Now == nil || o.Logger == nil {
		t.Errorf("defaults = %+v", o)
	}
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{SessionTTL: -time.Second}, "Options.SessionTTL"},
		{Options{SessionMaxAge: -time.Second}, "Options.SessionMaxAge"},
		{Options{SessionTTL: 2 * time.Hour, SessionMaxAge: time.Hour}, "Options.SessionMaxAge (1h0m0s) is shorter than Options.SessionTTL"},
		{Options{BcryptCost: 2}, "Options.BcryptCost is 2, want 4 to 31"},
		{Options{LoginFailuresPerUser: -1}, "Options.LoginFailuresPerUser"},
		{Options{LoginFailuresPerAddress: -1}, "Options.LoginFailuresPerAddress"},
	} {
		if _, err := tc.opts.withDefaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("withDefaults(%+v) = %v, want an error about %s", tc.opts, err, tc.want)
		}
	}
}
