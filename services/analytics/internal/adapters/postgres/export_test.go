package postgres

// ListSubscriptionsSQL is route 6's list query, for the benchmark's raw-SQL baseline.
var ListSubscriptionsSQL = listSubscriptions

// The daily series' statements, for the benchmark's raw-SQL baseline.
var (
	DailySignInsSQL  = dailySignIns
	DailyFactsSQL    = dailyFacts
	ActiveBeforeSQL  = activeBefore
	ActiveChangesSQL = activeChanges
)

// MigrationFiles are the embedded migrations, for the test that applies them in two steps.
var MigrationFiles = migrationFiles
