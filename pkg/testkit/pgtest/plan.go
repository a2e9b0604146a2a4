package pgtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Plans returns the plans PostgreSQL makes for sql with args: the custom plan (for these values)
// and the generic plan (for any values), as EXPLAIN prints them. Both matter: pgx prepares its
// statements, and the server switches a prepared statement to its generic plan after five
// executions when that plan does not look costlier, so a query whose index is used only for known
// values slows down at the sixth call.
func Plans(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) (custom, generic string) {
	tb.Helper()
	ctx := context.Background()
	pooled, err := pool.Acquire(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	// The session's settings and statement go with the connection, never back to the pool.
	conn := pooled.Hijack()
	defer func() { _ = conn.Close(ctx) }()
	// EXECUTE takes its arguments as literals (a utility statement has no parameters of its own).
	params := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			params[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case int:
			params[i] = fmt.Sprint(v)
		default:
			tb.Fatalf("Plans: argument %d is a %T; only strings and ints are written as literals", i+1, a)
		}
	}
	if _, err := conn.Exec(ctx, "prepare plan_probe as "+sql); err != nil {
		tb.Fatalf("prepare %s: %v", sql, err)
	}
	explain := func(mode string) string {
		if _, err := conn.Exec(ctx, "set plan_cache_mode = "+mode); err != nil {
			tb.Fatal(err)
		}
		rows, err := conn.Query(ctx, "explain execute plan_probe("+strings.Join(params, ", ")+")")
		if err != nil {
			tb.Fatalf("explain %s: %v", sql, err)
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				tb.Fatal(err)
			}
			lines = append(lines, line)
		}
		if err := rows.Err(); err != nil {
			tb.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	return explain("force_custom_plan"), explain("force_generic_plan")
}

// RequireIndexRange fails tb unless both plans of sql (Plans) read the index and neither scans the
// table or sorts: the rows come from the index, in its order.
func RequireIndexRange(tb testing.TB, pool *pgxpool.Pool, index, sql string, args ...any) {
	tb.Helper()
	custom, generic := Plans(tb, pool, sql, args...)
	for name, plan := range map[string]string{"custom": custom, "generic": generic} {
		if !strings.Contains(plan, "Index Scan using "+index) || strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Sort") {
			tb.Errorf("the %s plan does not read %s in its order:\n%s", name, index, plan)
		}
	}
}

// Statement is a call that runs sql with args on pool and reads every row of its answer without
// decoding it: the bare statement over pgx that benchmarks set beside a store's own read.
func Statement(ctx context.Context, pool *pgxpool.Pool, sql string, args ...any) func() error {
	return func() error {
		rows, err := pool.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			rows.RawValues()
		}
		return rows.Err()
	}
}

// CopyAnalyzed loads rows into table with COPY and then vacuums and analyzes it, as autovacuum
// would after such a load: a benchmark's measurements then meet neither a vacuum of the load nor
// the planner's guesses about an unanalyzed table.
func CopyAnalyzed(tb testing.TB, pool *pgxpool.Pool, table string, columns []string, rows [][]any) {
	tb.Helper()
	ctx := context.Background()
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows)); err != nil {
		tb.Fatalf("copy into %s: %v", table, err)
	}
	if _, err := pool.Exec(ctx, "vacuum (analyze) "+pgx.Identifier{table}.Sanitize()); err != nil {
		tb.Fatalf("vacuum %s: %v", table, err)
	}
}
