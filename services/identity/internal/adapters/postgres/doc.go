// Package postgres implements the identity store ports on PostgreSQL (pgx v5). Every change and the
// outbox events describing it are written in one transaction; the schema is embedded and applied by
// Migrate.
package postgres
