package server

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConfigRetention(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	tests := []struct {
		name string
		in   Retention
		want Retention
		err  string // the error's text, when the config is refused
	}{
		{name: "defaults", want: Retention{MaxAge: 30 * day, PerJob: 1000, MaxPerJob: 10000}},
		{name: "all set", in: Retention{MaxAge: day, PerJob: 5, MaxPerJob: 50}, want: Retention{MaxAge: day, PerJob: 5, MaxPerJob: 50}},
		{name: "floor equal to the cap", in: Retention{PerJob: 50, MaxPerJob: 50}, want: Retention{MaxAge: 30 * day, PerJob: 50, MaxPerJob: 50}},
		{name: "small cap lowers the default floor", in: Retention{MaxPerJob: 500}, want: Retention{MaxAge: 30 * day, PerJob: 500, MaxPerJob: 500}},
		{name: "no cap", in: Retention{MaxPerJob: NoRetentionCap}, want: Retention{MaxAge: 30 * day, PerJob: 1000, MaxPerJob: NoRetentionCap}},
		{name: "no cap, any floor", in: Retention{PerJob: 50000, MaxPerJob: NoRetentionCap}, want: Retention{MaxAge: 30 * day, PerJob: 50000, MaxPerJob: NoRetentionCap}},
		{name: "floor above the cap", in: Retention{PerJob: 2000, MaxPerJob: 1000}, err: "Retention.PerJob 2000 is more than Retention.MaxPerJob 1000"},
		{name: "floor above the default cap", in: Retention{PerJob: 20000}, err: "Retention.PerJob 20000 is more than Retention.MaxPerJob 10000"},
		{name: "cap below -1", in: Retention{MaxPerJob: -2}, err: "Retention.MaxPerJob -2"},
		{name: "negative floor", in: Retention{PerJob: -1}, err: "Retention.PerJob -1 is negative"},
		{name: "negative age", in: Retention{MaxAge: -time.Hour}, err: "Retention.MaxAge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Config{Retention: tt.in}.withDefaults()
			if tt.err == "" {
				if err != nil || got.Retention != tt.want {
					t.Errorf("withDefaults: Retention %+v, %v; want %+v", got.Retention, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("withDefaults: error %v, want ErrInvalidConfig saying %q", err, tt.err)
			}
			// New refuses it before touching the database.
			path := filepath.Join(t.TempDir(), "chime.db")
			srv, err := New(t.Context(), Config{DatabaseURL: "sqlite:" + path, Retention: tt.in, Logger: quietLogger})
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.err) {
				if srv != nil {
					_ = srv.Close()
				}
				t.Fatalf("New: error %v, want ErrInvalidConfig saying %q", err, tt.err)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("New with a refused config left a database file: %v", err)
			}
		})
	}
}

func TestConfigAdminPassword(t *testing.T) {
	t.Parallel()
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "chime.db")
		srv, err := New(t.Context(), Config{DatabaseURL: "sqlite:" + path, AdminPassword: "hunter2", Logger: quietLogger})
		want := "AdminPassword must be at least 12 characters"
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), want) {
			if srv != nil {
				_ = srv.Close()
			}
			t.Fatalf("New: error %v, want ErrInvalidConfig saying %q", err, want)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("New with a refused config left a database file: %v", err)
		}
	})
	t.Run("first start only", func(t *testing.T) {
		t.Parallel()
		url := "sqlite:" + filepath.Join(t.TempDir(), "chime.db")
		const first, second = "correct horse battery", "another long password"
		for i, pw := range []string{first, second} {
			s := newServer(t, url, func(c *Config) { c.AdminPassword = pw })
			password, created, err := s.BootstrapAdmin(t.Context())
			if err != nil || password != "" || created != (i == 0) {
				t.Fatalf("start %d: BootstrapAdmin = %q, %v, %v; want no password shown, created %v", i+1, password, created, err, i == 0)
			}
			// The first start's password holds; the second changed nothing.
			if _, err := s.auth.Login(t.Context(), "admin", first, "192.0.2.1:1"); err != nil {
				t.Errorf("start %d: logging in with the first password: %v", i+1, err)
			}
			if _, err := s.auth.Login(t.Context(), "admin", second, "192.0.2.1:1"); err == nil {
				t.Errorf("start %d: the second start's password logs in, want it ignored", i+1)
			}
			_ = s.Close()
		}
	})
}

func TestListenNamesATakenAddress(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	ln, err := Listen(addr)
	if err == nil {
		ln.Close()
		t.Fatalf("Listen(%s) on a taken port succeeded", addr)
	}
	if want := "server: cannot listen on " + addr + ": "; !errors.Is(err, ErrListen) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Listen(%s) error = %v, want ErrListen, starting %q", addr, err, want)
	}
	// Run reports it the same way.
	s := newServer(t, "sqlite:"+filepath.Join(t.TempDir(), "chime.db"), func(c *Config) { c.Listen = addr })
	if err := s.Run(t.Context()); !errors.Is(err, ErrListen) {
		t.Errorf("Run on a taken port = %v, want ErrListen", err)
	}
}
