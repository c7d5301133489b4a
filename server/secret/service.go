package secret

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// Limits of names and values.
const (
	// MaxNameLength is the most bytes of a secret's name.
	MaxNameLength = 200
	// MaxValueBytes is the most bytes of a secret's value.
	MaxValueBytes = 64 << 10
)

// Audit actions the service records.
const (
	ActionSet    = "secret.set"
	ActionDelete = "secret.delete"
)

// ErrNoKey is wrapped by the errors of reading or setting a secret on a
// service that has no key.
var ErrNoKey = errors.New("no secret key is configured: chime server reads one from CHIME_SECRET_KEY or the file secret_key_file names (generate one with `chime secrets keygen`)")

// NotDefinedError is the error of reading a secret that does not exist.
type NotDefinedError struct {
	// Name is the secret's name.
	Name string
}

// Error says which secret is missing.
func (e *NotDefinedError) Error() string { return fmt.Sprintf("secret %q is not defined", e.Name) }

// KeyError is the error of reading a secret whose value the service's key
// cannot decrypt: it was encrypted with another key, or altered.
type KeyError struct {
	// Name is the secret's name.
	Name string
	// StoredKeyID is the ID of the key the value was encrypted with, and
	// KeyID the ID of the service's key.
	StoredKeyID, KeyID string
	// Err is the decryption's error when the IDs match.
	Err error
}

// Error names the secret and the keys, never a key itself.
func (e *KeyError) Error() string {
	if e.StoredKeyID != e.KeyID {
		return fmt.Sprintf("secret %q was encrypted with the key whose ID is %s, but this server's key has ID %s: "+
			"start the server with the key the secret was set with, or set the secret again", e.Name, e.StoredKeyID, e.KeyID)
	}
	return fmt.Sprintf("secret %q: %v", e.Name, e.Err)
}

// Unwrap returns the decryption's error.
func (e *KeyError) Unwrap() error { return e.Err }

// AuditRecorder records who changed what. The server's execution history
// implements it.
type AuditRecorder interface {
	// RecordAudit records that actor did action to target; detail holds
	// what changed, never a secret's value.
	RecordAudit(ctx context.Context, actor, action, target string, detail map[string]any) error
}

// Options configure a Service. A nil *Options means the defaults.
type Options struct {
	// Key encrypts and decrypts values. Defaults to none: secrets can be
	// listed and deleted, but setting or reading one fails with an error
	// wrapping ErrNoKey.
	Key *Key
	// Audit records every change. Defaults to none.
	Audit AuditRecorder
	// Logger receives failures to record an audit entry. Defaults to
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

// Service keeps named secrets encrypted in a store's database. It is safe
// for concurrent use, and any number of services (one per node) may share
// one database; they must share the key too.
type Service struct {
	db    *sql.DB
	st    *sqlstore.Store
	sched string
	q     queries
	key   *Key
	audit AuditRecorder
	log   *slog.Logger
	now   func() time.Time
}

// New creates the service's table on st's database if it does not exist
// (safe when several nodes start at once) and returns the service.
func New(ctx context.Context, st *sqlstore.Store, opts *Options) (*Service, error) {
	if st == nil {
		return nil, errors.New("secret: New: nil store")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := st.MigrateComponent(ctx, component, migrations()); err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return &Service{
		db: st.DB(), st: st, sched: st.SchedulerName(), q: renderQueries(st.SQL),
		key: o.Key, audit: o.Audit, log: o.Logger, now: o.Now,
	}, nil
}

// KeyID returns the ID of the service's key, or "" when it has none.
func (s *Service) KeyID() string {
	if s.key == nil {
		return ""
	}
	return s.key.ID()
}

// target names a secret in audit entries.
func target(name string) string { return "secrets/" + name }

// ad is the additional data a secret's value is sealed with: its
// scheduler and name, so that a value moved to another row does not
// decrypt.
func (s *Service) ad(name string) []byte {
	return []byte("chime secret\x00" + s.sched + "\x00" + name)
}

// ValidateName checks a secret's name: 1 to 200 of ASCII letters, digits,
// '.', '_' and '-', starting with a letter or digit. The error is an
// *api.Error naming field.
func ValidateName(field, name string) error {
	if name == "" {
		return httpjson.Errorf(api.CodeInvalidArgument, field, "required")
	}
	if len(name) > MaxNameLength {
		return httpjson.Errorf(api.CodeInvalidArgument, field, "is %d bytes long, at most %d allowed", len(name), MaxNameLength)
	}
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return httpjson.Errorf(api.CodeInvalidArgument, field,
				"%q: want letters, digits, '.', '_' and '-', starting with a letter or digit", name)
		}
	}
	return nil
}

// Set encrypts value with the service's key and stores it as the secret
// name, replacing any value it had, and reports whether it created the
// secret. The value is non-empty UTF-8 of at most MaxValueBytes. Without
// a key it refuses with an *api.Error saying how to configure one.
func (s *Service) Set(ctx context.Context, actor, name, value string) (*api.Secret, bool, error) {
	if err := ValidateName("name", name); err != nil {
		return nil, false, err
	}
	switch {
	case value == "":
		return nil, false, httpjson.Errorf(api.CodeInvalidArgument, "value", "required")
	case len(value) > MaxValueBytes:
		return nil, false, httpjson.Errorf(api.CodeInvalidArgument, "value", "is %d bytes long, at most %d allowed", len(value), MaxValueBytes)
	case !utf8.ValidString(value):
		return nil, false, httpjson.Errorf(api.CodeInvalidArgument, "value", "is not valid UTF-8; encode a binary value, such as in base64")
	}
	if s.key == nil {
		return nil, false, httpjson.Errorf(api.CodeInvalidArgument, "", "this server cannot encrypt secrets: %v", ErrNoKey)
	}
	sealed := s.key.seal([]byte(value), s.ad(name))
	now := s.now().UnixNano()
	created := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q.update, s.key.ID(), sealed, now, actor, s.sched, name)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		created = true
		_, err = tx.ExecContext(ctx, s.q.insert, s.sched, name, s.key.ID(), sealed, now, now, actor)
		return err
	})
	if created && s.st.IsUniqueViolation(err) {
		// Another node created it between our update and our insert: it
		// exists now, so this is a replacement.
		created = false
		err = s.inTx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, s.q.update, s.key.ID(), sealed, now, actor, s.sched, name)
			return err
		})
	}
	if err != nil {
		return nil, false, fmt.Errorf("secret: setting %q: %w", name, err)
	}
	s.record(ctx, actor, ActionSet, name, map[string]any{"created": created, "key_id": s.key.ID()})
	out, err := s.Get(ctx, name)
	if err != nil {
		return nil, false, err
	}
	return out, created, nil
}

// Get returns a secret's name, key ID and times, never its value; an
// *api.Error not_found when it does not exist.
func (s *Service) Get(ctx context.Context, name string) (*api.Secret, error) {
	if err := ValidateName("name", name); err != nil {
		return nil, err
	}
	out, err := scanMeta(s.db.QueryRowContext(ctx, s.q.meta, s.sched, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, httpjson.Errorf(api.CodeNotFound, "name", "secret %q is not defined", name)
	}
	if err != nil {
		return nil, fmt.Errorf("secret: reading %q: %w", name, err)
	}
	return out, nil
}

// List returns every secret by name, without values.
func (s *Service) List(ctx context.Context) ([]api.Secret, error) {
	rows, err := s.db.QueryContext(ctx, s.q.list, s.sched)
	if err != nil {
		return nil, fmt.Errorf("secret: listing: %w", err)
	}
	defer rows.Close()
	out := []api.Secret{}
	for rows.Next() {
		sec, err := scanMeta(rows)
		if err != nil {
			return nil, fmt.Errorf("secret: listing: %w", err)
		}
		out = append(out, *sec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("secret: listing: %w", err)
	}
	return out, nil
}

// Delete deletes a secret; an *api.Error not_found when it does not
// exist. Jobs that still refer to it fail when they fire.
func (s *Service) Delete(ctx context.Context, actor, name string) error {
	if err := ValidateName("name", name); err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, s.q.delete, s.sched, name)
	if err != nil {
		return fmt.Errorf("secret: deleting %q: %w", name, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("secret: deleting %q: %w", name, err)
	} else if n == 0 {
		return httpjson.Errorf(api.CodeNotFound, "name", "secret %q is not defined", name)
	}
	s.record(ctx, actor, ActionDelete, name, nil)
	return nil
}

// Value decrypts and returns a secret's value. Its errors name the
// secret: a *NotDefinedError when it does not exist, one wrapping ErrNoKey
// when the service has no key, a *KeyError when the key cannot decrypt
// it, and database errors wrapped.
func (s *Service) Value(ctx context.Context, name string) (string, error) {
	var keyID, sealed string
	err := s.db.QueryRowContext(ctx, s.q.get, s.sched, name).Scan(&keyID, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", &NotDefinedError{Name: name}
	}
	if err != nil {
		return "", fmt.Errorf("secret %q: reading it: %w", name, err)
	}
	if s.key == nil {
		return "", fmt.Errorf("secret %q cannot be decrypted: %w", name, ErrNoKey)
	}
	if keyID != s.key.ID() {
		return "", &KeyError{Name: name, StoredKeyID: keyID, KeyID: s.key.ID()}
	}
	plain, err := s.key.open(sealed, s.ad(name))
	if err != nil {
		return "", &KeyError{Name: name, StoredKeyID: keyID, KeyID: s.key.ID(), Err: err}
	}
	return string(plain), nil
}

// scanMeta reads a row of the meta or list query.
func scanMeta(row interface{ Scan(...any) error }) (*api.Secret, error) {
	var (
		sec              api.Secret
		created, updated int64
	)
	if err := row.Scan(&sec.Name, &sec.KeyID, &created, &updated, &sec.UpdatedBy); err != nil {
		return nil, err
	}
	c, u := time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	sec.Created, sec.Updated = &c, &u
	return &sec, nil
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (s *Service) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.st.BeginTx(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// record records a change that has been made. A failure to record it is
// logged at Error rather than returned: the change stands.
func (s *Service) record(ctx context.Context, actor, action, name string, detail map[string]any) {
	if s.audit == nil {
		return
	}
	if err := s.audit.RecordAudit(context.WithoutCancel(ctx), actor, action, target(name), detail); err != nil {
		s.log.LogAttrs(ctx, slog.LevelError, "recording an audit entry failed",
			slog.String("actor", actor), slog.String("action", action), slog.String("target", target(name)),
			slog.Any("error", err))
	}
}
