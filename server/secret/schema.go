package secret

import "github.com/chime-scheduler/chime/store/sqlstore"

// component names this package's tables: {prefix}secrets_values, its
// versions in {prefix}secrets_schema_migrations.
const component = "secrets"

// migrations are the secrets' schema history, oldest first. A released
// migration is never edited; changes append a new one.
//
// sealed is the base64 of the AES-256-GCM nonce and ciphertext of the
// value, key_id the ID of the key that sealed it. Instants are BIGINT
// Unix nanoseconds.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "secrets, encrypted",
		Tables: []sqlstore.Table{{
			Name: "secrets_values",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"name {key} NOT NULL",
				"key_id VARCHAR(16) NOT NULL",
				"sealed {text} NOT NULL",
				"created BIGINT NOT NULL",
				"updated BIGINT NOT NULL",
				"updated_by {key} NOT NULL",
			},
			Primary: "sched_name, name",
		}},
	}}
}

// queries are the package's statements, rendered for the store's dialect
// and table prefix once per Service; the first parameter is always the
// scheduler name, or in an UPDATE the new values.
type queries struct {
	get, meta, list, insert, update, delete string
}

// renderQueries renders every statement with render (the store's SQL).
func renderQueries(render func(string) string) queries {
	return queries{
		get:  render(`SELECT key_id, sealed FROM {p}secrets_values WHERE sched_name = ? AND name = ?`),
		meta: render(`SELECT name, key_id, created, updated, updated_by FROM {p}secrets_values WHERE sched_name = ? AND name = ?`),
		list: render(`SELECT name, key_id, created, updated, updated_by FROM {p}secrets_values WHERE sched_name = ? ORDER BY name`),
		insert: render(`INSERT INTO {p}secrets_values (sched_name, name, key_id, sealed, created, updated, updated_by)
			VALUES (?, ?, ?, ?, ?, ?, ?)`),
		update: render(`UPDATE {p}secrets_values SET key_id = ?, sealed = ?, updated = ?, updated_by = ?
			WHERE sched_name = ? AND name = ?`),
		delete: render(`DELETE FROM {p}secrets_values WHERE sched_name = ? AND name = ?`),
	}
}
