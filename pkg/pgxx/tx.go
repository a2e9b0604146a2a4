package pgxx

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Querier is what both *pgxpool.Pool and pgx.Tx satisfy, so store code can run the same statements
// inside or outside a transaction.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type txKey struct{}

// InTx runs fn in a transaction: commit when fn returns nil, rollback otherwise. The ctx passed to fn
// carries the transaction. If ctx already carries one (placed there by InTx or by the events inbox),
// fn joins it through a savepoint instead of opening a new transaction: its writes commit only with
// the outer transaction, and a failing fn undoes just its own part, leaving the outer caller to decide.
// Joining ignores pool: a ctx carries at most one transaction, which belongs to the database it came from.
func InTx(ctx context.Context, pool *pgxpool.Pool, fn func(ctx context.Context, tx pgx.Tx) error) (err error) {
	var tx pgx.Tx
	if outer, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		tx, err = outer.Begin(ctx) // a savepoint inside the outer transaction
	} else {
		tx, err = pool.Begin(ctx)
	}
	if err != nil {
		return fmt.Errorf("pgxx: begin: %w", err)
	}
	defer func() {
		if err != nil {
			// Rollback after a failed statement or a cancelled ctx may itself fail; the first error is
			// the one worth returning, and pgx discards the connection of a transaction it cannot end.
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err = fn(context.WithValue(ctx, txKey{}, tx), tx); err != nil {
		return err
	}
	if err = tx.Commit(ctx); err != nil {
		return fmt.Errorf("pgxx: commit: %w", err)
	}
	return nil
}

// Q returns the transaction carried by ctx, or pool when there is none.
func Q(ctx context.Context, pool *pgxpool.Pool) Querier {
	if tx, ok := ctx.Value(txKey{}).(pgx.Tx); ok {
		return tx
	}
	return pool
}
