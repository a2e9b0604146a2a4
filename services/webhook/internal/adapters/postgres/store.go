package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/webhook/internal/app"
	"github.com/berthhq/berth/services/webhook/internal/domain"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Component is the name the webhook migrations are recorded under.
const Component = "webhook"

// Migrate applies the webhook migrations.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgxx.MigrateSets(ctx, pool, pgxx.Set{Component: Component, Files: migrationFiles, Dir: "migrations"})
}

// Store implements app.Store on PostgreSQL.
type Store struct{ pool *pgxpool.Pool }

// New returns a store over a migrated pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const columns = `id::text, provider, provider_event_id, coalesce(dedupe_key, ''), type, connection_id, test, body, content_type,
	signature, host, outcome, attempts, last_error, effect, received_at, applied_at`

// scan reads a row of columns; what names the statement in an error.
func scan(row pgx.Row, what string) (domain.Event, error) {
	var (
		e       domain.Event
		applied *time.Time
	)
	err := row.Scan(&e.ID, &e.Provider, &e.ProviderEventID, &e.DedupeKey, &e.Type, &e.ConnectionID, &e.Test, &e.Body, &e.ContentType,
		&e.Signature, &e.Host, &e.Outcome, &e.Attempts, &e.LastError, &e.Effect, &e.ReceivedAt, &applied)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Event{}, domain.ErrEventNotFound
	}
	if err != nil {
		return domain.Event{}, fmt.Errorf("%s webhook event: %w", what, err)
	}
	e.ReceivedAt = e.ReceivedAt.UTC()
	if applied != nil {
		e.AppliedAt = applied.UTC()
	}
	return e, nil
}

// insertSQL stores a call unless its dedupe key is stored, answering the row as stored; Record
// binds $1–$13.
const insertSQL = `INSERT INTO webhook_events (id, provider, provider_event_id, dedupe_key, type, connection_id, test, body,
	content_type, signature, host, outcome, attempts, last_error, effect, received_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 0, '', '', $13) ON CONFLICT (provider, dedupe_key) DO NOTHING RETURNING ` + columns

// Record inserts e unless its dedupe key is stored, answering the row as stored in the same
// statement; otherwise it reads the stored call. The unique constraint decides between racing
// deliveries of one event: one inserts, the others wait for its commit and read it.
func (s *Store) Record(ctx context.Context, e domain.Event) (domain.Event, bool, error) {
	var dedupe *string
	if e.DedupeKey != "" {
		dedupe = &e.DedupeKey
	}
	got, err := scan(s.pool.QueryRow(ctx, insertSQL, e.ID, e.Provider, e.ProviderEventID, dedupe, e.Type, e.ConnectionID, e.Test, e.Body, e.ContentType, e.Signature, e.Host, e.Outcome, e.ReceivedAt), "insert")
	if !errors.Is(err, domain.ErrEventNotFound) { // inserted, or failed
		return got, err == nil, err
	}
	// A second statement, so that it sees a racing delivery's row committed after the insert began.
	got, err = scan(s.pool.QueryRow(ctx, "SELECT "+columns+" FROM webhook_events WHERE provider = $1 AND dedupe_key = $2", e.Provider, e.DedupeKey), "select")
	return got, false, err
}

// Finish records an attempt in one UPDATE, which holds the row's lock while it counts the attempt
// in place; what the attempt sets is app.Finish's rule applied to a blank call (outcome, effect
// and error; applied_at only when it sets one).
func (s *Store) Finish(ctx context.Context, id string, a app.Attempt) (domain.Event, error) {
	if uuid.Validate(id) != nil {
		return domain.Event{}, domain.ErrEventNotFound
	}
	var set domain.Event
	app.Finish(&set, a)
	var applied *time.Time
	if !set.AppliedAt.IsZero() {
		applied = &set.AppliedAt
	}
	return scan(s.pool.QueryRow(ctx, `UPDATE webhook_events SET outcome = $2, effect = $3, last_error = $4, attempts = attempts + 1,
		applied_at = coalesce($5, applied_at) WHERE id = $1 RETURNING `+columns, id, set.Outcome, set.Effect, set.LastError, applied), "update")
}

// Event reads a stored call.
func (s *Store) Event(ctx context.Context, id string) (domain.Event, error) {
	if uuid.Validate(id) != nil {
		return domain.Event{}, domain.ErrEventNotFound
	}
	return scan(s.pool.QueryRow(ctx, "SELECT "+columns+" FROM webhook_events WHERE id = $1", id), "select")
}

// Events lists matching calls, newest first.
func (s *Store) Events(ctx context.Context, f domain.Filter) ([]domain.Event, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.ConnectionID != "" {
		add("connection_id = ?", f.ConnectionID)
	}
	if f.Outcome != "" {
		add("outcome = ?", f.Outcome)
	}
	if f.Provider != "" {
		add("provider = ?", f.Provider)
	}
	if !f.Since.IsZero() {
		add("received_at >= ?", f.Since)
	}
	if !f.Until.IsZero() {
		add("received_at < ?", f.Until)
	}
	q := "SELECT " + columns + " FROM webhook_events"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, f.Limit)
	rows, err := s.pool.Query(ctx, q+" ORDER BY received_at DESC, id LIMIT $"+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("list webhook events: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.Event, error) { return scan(r, "list") })
}
