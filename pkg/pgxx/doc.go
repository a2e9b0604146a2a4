// Package pgxx holds what every Berth Postgres adapter needs from pgx v5: opening a pool, applying a
// service's embedded forward-only migrations, and running work in a transaction that nested callers
// (a store method called from an event consumer's inbox, say) join instead of opening their own, so
// that a state change, its outbox event and an inbox record commit or roll back together; and
// checking, at start, that the keys a database's contents depend on are the ones it was written
// with (CheckKeys).
package pgxx
