package outbox

import "github.com/chime-scheduler/chime/store/sqlstore"

// component names the package's tables: {p}outbox_….
const component = "outbox"

// migrations are the package's schema, oldest first. A released migration
// is never edited; changes append a new one. Instants are BIGINT Unix
// nanoseconds of the database's clock.
func migrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "messages waiting to be sent, leased to one node at a time",
		Tables: []sqlstore.Table{{
			Name: "outbox_messages",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"id {key} NOT NULL",
				"delivery_key {key} NOT NULL",
				"payload {text} NOT NULL",
				"created BIGINT NOT NULL",
				"attempts INTEGER NOT NULL",
				"owner {key} NOT NULL",
				"due BIGINT NOT NULL",
			},
			Primary: "sched_name, id",
			Indexes: []sqlstore.Index{
				{Name: "outbox_messages_due", Cols: "sched_name, due"},
			},
		}},
	}}
}
