// Package sqlstore is chime's SQL store: one implementation of
// [store.Store] for SQLite, PostgreSQL and MySQL/MariaDB.
package sqlstore
