package postgres

// ListSubscriptionsSQL is route 6's list query, for the benchmark's raw-SQL baseline.
var ListSubscriptionsSQL = listSubscriptions
