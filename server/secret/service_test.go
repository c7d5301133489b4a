package secret_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/secret"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// auditLog collects the entries a service records.
type auditLog struct {
	mu      sync.Mutex
	entries []string
}

// RecordAudit implements secret.AuditRecorder.
func (a *auditLog) RecordAudit(_ context.Context, actor, action, target string, detail map[string]any) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, fmt.Sprintf("%s %s %s %v", actor, action, target, detail))
	return nil
}

func (a *auditLog) Entries() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.entries)
}

// forEachDatabase runs test in parallel subtests, once per database.
func forEachDatabase(t *testing.T, test func(t *testing.T, url string)) {
	t.Helper()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			test(t, db.URL(t))
		})
	}
}

// openStore opens a store on url, closed when the test ends.
func openStore(t *testing.T, url string) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatalf("sqlstore.Open(%s): %v", url, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// newService opens a service on st with key (none when empty).
func newService(t *testing.T, st *sqlstore.Store, key string, audit *auditLog) *secret.Service {
	t.Helper()
	opts := &secret.Options{Now: func() time.Time { return time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC) }}
	if key != "" {
		k, err := secret.ParseKey(key)
		if err != nil {
			t.Fatalf("ParseKey: %v", err)
		}
		opts.Key = k
	}
	if audit != nil {
		opts.Audit = audit
	}
	svc, err := secret.New(t.Context(), st, opts)
	if err != nil {
		t.Fatalf("secret.New: %v", err)
	}
	return svc
}

// wantAPIError fails t unless err is an *api.Error with code and field.
func wantAPIError(t *testing.T, err error, code api.ErrorCode, field string) {
	t.Helper()
	var e *api.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want an *api.Error %s", err, err, code)
	}
	if e.Code != code || e.Field != field {
		t.Fatalf("error %+v, want code %s field %q", e, code, field)
	}
}

// TestValuesAreEncryptedAtRest sets secrets and reads the table back with
// SQL: the stored bytes hold neither the value nor its base64, and only
// the service's Value decrypts them; metadata and audit entries never hold
// the value.
func TestValuesAreEncryptedAtRest(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		ctx := t.Context()
		st := openStore(t, url)
		audit := &auditLog{}
		key := secret.GenerateKey()
		svc := newService(t, st, key, audit)
		const value = "Bearer-token-0123456789-very-secret"

		sec, created, err := svc.Set(ctx, "alice", "billing-token", value)
		if err != nil {
			t.Fatalf("Set: %v", err)
		}
		if !created || sec.Name != "billing-token" || sec.KeyID != svc.KeyID() || sec.UpdatedBy != "alice" {
			t.Fatalf("Set = %+v, created %v; want billing-token created by alice with key %s and no value", sec, created, svc.KeyID())
		}

		var keyID, sealed string
		err = st.DB().QueryRowContext(ctx, st.SQL(`SELECT key_id, sealed FROM {p}secrets_values WHERE name = ?`), "billing-token").Scan(&keyID, &sealed)
		if err != nil {
			t.Fatalf("reading the row: %v", err)
		}
		if keyID != svc.KeyID() {
			t.Errorf("stored key_id %q, want %q", keyID, svc.KeyID())
		}
		for _, leak := range []string{value, base64.StdEncoding.EncodeToString([]byte(value)), "very-secret", key} {
			if strings.Contains(sealed, leak) {
				t.Errorf("the stored value %q holds %q", sealed, leak)
			}
		}

		got, err := svc.Value(ctx, "billing-token")
		if err != nil || got != value {
			t.Fatalf("Value = %q, %v; want %q", got, err, value)
		}
		// A second Set of the same value stores other bytes: each value
		// has its own nonce.
		if _, created, err := svc.Set(ctx, "bob", "billing-token", value); err != nil || created {
			t.Fatalf("second Set: created %v, %v; want a replacement", created, err)
		}
		var again string
		if err := st.DB().QueryRowContext(ctx, st.SQL(`SELECT sealed FROM {p}secrets_values WHERE name = ?`), "billing-token").Scan(&again); err != nil {
			t.Fatal(err)
		}
		if again == sealed {
			t.Error("setting the same value again stored the same bytes; want a fresh nonce")
		}

		list, err := svc.List(ctx)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if len(list) != 1 || list[0].Name != "billing-token" || list[0].UpdatedBy != "bob" {
			t.Errorf("List = %+v, want billing-token last set by bob, without a value", list)
		}
		if err := svc.Delete(ctx, "carol", "billing-token"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := svc.Value(ctx, "billing-token"); !errors.As(err, new(*secret.NotDefinedError)) || err.Error() != `secret "billing-token" is not defined` {
			t.Errorf("Value after Delete: %v, want secret \"billing-token\" is not defined", err)
		}
		want := []string{
			"alice secret.set secrets/billing-token map[created:true key_id:" + svc.KeyID() + "]",
			"bob secret.set secrets/billing-token map[created:false key_id:" + svc.KeyID() + "]",
			"carol secret.delete secrets/billing-token map[]",
		}
		if got := audit.Entries(); !slices.Equal(got, want) {
			t.Errorf("audit entries:\n%q\nwant\n%q", got, want)
		}
	})
}

// TestWrongKeyIsNamed reads secrets with another key, with none, and a
// value moved to another secret's row: each fails with an error naming
// the secret and the problem, never with a wrong value.
func TestWrongKeyIsNamed(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, url string) {
		ctx := t.Context()
		st := openStore(t, url)
		svc := newService(t, st, secret.GenerateKey(), nil)
		for _, name := range []string{"a", "b"} {
			if _, _, err := svc.Set(ctx, "admin", name, "value of "+name); err != nil {
				t.Fatalf("Set(%s): %v", name, err)
			}
		}

		other := newService(t, st, secret.GenerateKey(), nil)
		_, err := other.Value(ctx, "a")
		var ke *secret.KeyError
		if !errors.As(err, &ke) || ke.Name != "a" || ke.StoredKeyID != svc.KeyID() || ke.KeyID != other.KeyID() {
			t.Fatalf("Value with another key: %v; want a *KeyError naming a, %s and %s", err, svc.KeyID(), other.KeyID())
		}
		for _, part := range []string{`secret "a"`, svc.KeyID(), other.KeyID(), "set the secret again"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("error %q does not say %q", err, part)
			}
		}

		none := newService(t, st, "", nil)
		if _, err := none.Value(ctx, "a"); !errors.Is(err, secret.ErrNoKey) || !strings.Contains(err.Error(), "CHIME_SECRET_KEY") {
			t.Errorf("Value without a key: %v; want ErrNoKey saying how to configure one", err)
		}
		_, _, err = none.Set(ctx, "admin", "c", "v")
		wantAPIError(t, err, api.CodeInvalidArgument, "")
		if !strings.Contains(err.Error(), "CHIME_SECRET_KEY") {
			t.Errorf("Set without a key: %v; want it to say how to configure one", err)
		}
		if list, err := none.List(ctx); err != nil || len(list) != 2 {
			t.Errorf("List without a key = %v, %v; want both secrets", list, err)
		}

		// b's sealed value copied into a's row does not decrypt as a's.
		_, err = st.DB().ExecContext(ctx, st.SQL(`UPDATE {p}secrets_values
			SET sealed = (SELECT sealed FROM (SELECT sealed FROM {p}secrets_values WHERE name = 'b') AS t) WHERE name = 'a'`))
		if err != nil {
			t.Fatalf("copying a row's value: %v", err)
		}
		_, err = svc.Value(ctx, "a")
		if !errors.As(err, &ke) || ke.StoredKeyID != ke.KeyID || !strings.Contains(err.Error(), "altered") {
			t.Errorf("Value of a moved value: %v; want a *KeyError saying it was altered", err)
		}
	})
}

// TestSetRefusesBadInput checks names and values, on SQLite: validation
// does not depend on the database.
func TestSetRefusesBadInput(t *testing.T) {
	t.Parallel()
	svc := newService(t, openStore(t, dbtest.SQLiteURL(t)), secret.GenerateKey(), nil)
	ctx := t.Context()
	for _, tc := range []struct {
		name, secretName, value, field string
	}{
		{"empty name", "", "v", "name"},
		{"name with a space", "my token", "v", "name"},
		{"name starting with a dash", "-tok", "v", "name"},
		{"name with a slash", "a/b", "v", "name"},
		{"long name", strings.Repeat("a", secret.MaxNameLength+1), "v", "name"},
		{"empty value", "tok", "", "value"},
		{"huge value", "tok", strings.Repeat("x", secret.MaxValueBytes+1), "value"},
		{"invalid UTF-8", "tok", "\xff\xfe", "value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := svc.Set(ctx, "admin", tc.secretName, tc.value)
			wantAPIError(t, err, api.CodeInvalidArgument, tc.field)
		})
	}
	if list, err := svc.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("List after refused sets = %v, %v; want none", list, err)
	}
	wantAPIError(t, svc.Delete(ctx, "admin", "missing"), api.CodeNotFound, "name")
	_, err := svc.Get(ctx, "missing")
	wantAPIError(t, err, api.CodeNotFound, "name")
	if _, _, err := svc.Set(ctx, "admin", "Billing_API.token-2", strings.Repeat("x", secret.MaxValueBytes)); err != nil {
		t.Errorf("Set of the longest name characters and value: %v", err)
	}
}

// TestParseKey reads keys in each base64 form and refuses others without
// quoting them.
func TestParseKey(t *testing.T) {
	t.Parallel()
	raw := make([]byte, secret.KeySize)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	want, err := secret.ParseKey(base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		base64.StdEncoding.EncodeToString(raw) + "\n",
		base64.RawStdEncoding.EncodeToString(raw),
		base64.URLEncoding.EncodeToString(raw),
		" " + base64.RawURLEncoding.EncodeToString(raw) + " ",
	} {
		k, err := secret.ParseKey(text)
		if err != nil || k.ID() != want.ID() {
			t.Errorf("ParseKey(%q) = %v, %v; want the key %s", text, k, err, want.ID())
		}
	}
	if len(want.ID()) != 16 {
		t.Errorf("ID %q: want 16 hex digits", want.ID())
	}
	short := base64.StdEncoding.EncodeToString(raw[:16])
	for _, bad := range []string{"", "not base64 at all!", short} {
		_, err := secret.ParseKey(bad)
		if !errors.Is(err, secret.ErrInvalidKey) {
			t.Errorf("ParseKey(%q) = %v, want ErrInvalidKey", bad, err)
			continue
		}
		if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("ParseKey(%q) error %q quotes the key", bad, err)
		}
	}
	if _, err := secret.ParseKey(short); err == nil || !strings.Contains(err.Error(), "decodes to 16 bytes, want 32") {
		t.Errorf("ParseKey(16 bytes) = %v, want it to say the size", err)
	}
	if a, b := secret.GenerateKey(), secret.GenerateKey(); a == b {
		t.Error("GenerateKey returned the same key twice")
	}
}
