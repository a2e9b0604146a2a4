// Package postgres is the production tenant store (pgx). Tenants and their addresses live in the
// tenant service's own tables; every write also inserts its events into the outbox in the same
// transaction, so a relayed event always describes committed state. Migrations are embedded and
// applied with pgxx.Migrate under the component name "tenant".
package postgres
