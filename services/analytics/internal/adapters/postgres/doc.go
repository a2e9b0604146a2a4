// Package postgres is the production analytics store (pgx). Sign-ins and the user and tenant
// snapshots live in the analytics_* tables; snapshots keep the producer's message as protojson, so
// a field added upstream needs no migration here. Every statement runs on the transaction the ctx
// carries, if any, so the events inbox commits an event's effects with its record. Migrations are
// embedded and applied with pgxx.Migrate under the component name "analytics", together with the
// shared events tables (the inbox).
package postgres
