package postgres

// InsertSQL is the statement Store.Record stores a call with, for the benchmark's pgbench baseline.
const InsertSQL = insertSQL
