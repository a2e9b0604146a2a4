// Package postgres is billing's durable store on PostgreSQL (pgx): one Store implementing every
// storage port of internal/app, each port's methods in the file named for its aggregate
// (connections, settings, catalog, promotions, accounts, customers, checkouts, charges). A write
// that changes a tenant's account with another aggregate locks the other row first, then the
// account (withAccount, in accounts.go), and commits both, the once-only record of the change and
// its outbox events in one transaction.
package postgres
