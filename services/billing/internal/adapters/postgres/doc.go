// Package postgres is billing's durable store on PostgreSQL (pgx): connections with sealed secrets,
// settings, the pspy catalog, promotions with their redemptions, and tenants' billing accounts,
// whose changes commit with their outbox events.
package postgres
