package auth

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestKeyedLimiter checks the buckets, their refill and the bound on keys.
func TestKeyedLimiter(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	l := newKeyedLimiter(2, time.Minute, 3)
	for i, want := range []bool{true, true, false} {
		if got := l.allow("a", t0); got != want {
			t.Errorf("attempt %d of a: allow = %v, want %v", i+1, got, want)
		}
	}
	if !l.allow("b", t0) {
		t.Errorf("b is limited by a's attempts")
	}
	if !l.allow("a", t0.Add(30*time.Second)) || l.allow("a", t0.Add(30*time.Second)) {
		t.Errorf("a after 30s: want one attempt back (2 a minute), and one only")
	}
	l.allow("c", t0.Add(30*time.Second))

	// Full: a new key evicts the buckets that have refilled, b's.
	l.allow("d", t0.Add(40*time.Second))
	if _, ok := l.buckets["b"]; ok || l.size() != 3 {
		t.Errorf("after a fourth key: b kept %v, size %d; want b evicted, size 3", ok, l.size())
	}
	// Full, and no bucket has refilled: a new key evicts one.
	l.allow("x", t0.Add(45*time.Second))
	if got := l.size(); got != 3 {
		t.Errorf("size = %d after a fifth key, want the bound, 3", got)
	}
	// Every bucket has refilled: a new key evicts them all.
	l.allow("e", t0.Add(3*time.Minute))
	if got := l.size(); got != 1 {
		t.Errorf("size = %d after every bucket refilled, want 1", got)
	}
	for i := range 100 {
		l.allow(fmt.Sprint("k", i), t0.Add(3*time.Minute))
	}
	if got := l.size(); got != 3 {
		t.Errorf("size = %d after 100 keys, want the bound, 3", got)
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
		o.LoginAttemptsPerUser != 5 || o.LoginAttemptsPerAddress != 20 || o.Now == nil || o.Logger == nil {
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
		{Options{LoginAttemptsPerUser: -1}, "Options.LoginAttemptsPerUser"},
		{Options{LoginAttemptsPerAddress: -1}, "Options.LoginAttemptsPerAddress"},
	} {
		if _, err := tc.opts.withDefaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("withDefaults(%+v) = %v, want an error about %s", tc.opts, err, tc.want)
		}
	}
}
