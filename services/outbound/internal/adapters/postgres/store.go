package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Component is the name the outbound tables' migrations are recorded under.
const Component = "outbound"

// Migrate applies the outbound tables' migrations, the shared events tables (the inbox of the
// consumers) and the record of the key the endpoint secrets are sealed with.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgxx.MigrateSets(ctx, pool, pgxx.Set{Component: Component, Files: migrationFiles, Dir: "migrations"},
		pgxx.Set{Component: "events", Files: events.Migrations}, pgxx.KeyCheckSet)
}

// Store implements app.Store.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a store on a migrated database.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const endpointColumns = `id::text, app_id::text, url, events, description, disabled, secret, previous_secret, previous_until, failing_since, created_at, updated_at`

func scanEndpoint(row pgx.Row) (domain.Endpoint, error) {
	var (
		e              domain.Endpoint
		until, failing *time.Time
	)
	err := row.Scan(&e.ID, &e.AppID, &e.URL, &e.Events, &e.Description, &e.Disabled, &e.Secret, &e.Previous, &until, &failing, &e.CreatedAt, &e.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Endpoint{}, domain.ErrNotFound
	}
	if err != nil {
		return domain.Endpoint{}, fmt.Errorf("scan endpoint: %w", err)
	}
	if until != nil {
		e.PreviousUntil = until.UTC()
	}
	if failing != nil {
		e.FailingSince = failing.UTC()
	}
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	return e, nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// CreateEndpoint inserts the endpoint.
func (s *Store) CreateEndpoint(ctx context.Context, e domain.Endpoint) error {
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `INSERT INTO endpoints (id, app_id, url, events, description, disabled, secret, previous_secret, previous_until, failing_since, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		e.ID, e.AppID, e.URL, e.Events, e.Description, e.Disabled, e.Secret, e.Previous, nullTime(e.PreviousUntil), nullTime(e.FailingSince), e.CreatedAt, e.UpdatedAt)
	if err != nil {
		return fmt.Errorf("insert endpoint: %w", err)
	}
	return nil
}

// GetEndpoint reads the app's endpoint.
func (s *Store) GetEndpoint(ctx context.Context, appID, id string) (domain.Endpoint, error) {
	return scanEndpoint(pgxx.Q(ctx, s.pool).QueryRow(ctx, `SELECT `+endpointColumns+` FROM endpoints WHERE id = $1 AND app_id = $2`, id, appID))
}

// ListEndpoints reads the app's endpoints, oldest first.
func (s *Store) ListEndpoints(ctx context.Context, appID string) ([]domain.Endpoint, error) {
	return s.listEndpoints(ctx, `SELECT `+endpointColumns+` FROM endpoints WHERE app_id = $1 ORDER BY created_at, id`, appID)
}

// EndpointsToDeliver reads the app's endpoints with a key-share lock: in the consumer's transaction
// it holds off DeleteEndpoint until the deliveries recorded for them commit, and DeleteEndpoint
// then deletes those too. One lock per endpoint and batch, where a foreign key took one per
// delivery.
func (s *Store) EndpointsToDeliver(ctx context.Context, appID string) ([]domain.Endpoint, error) {
	return s.listEndpoints(ctx, `SELECT `+endpointColumns+` FROM endpoints WHERE app_id = $1 ORDER BY created_at, id FOR KEY SHARE`, appID)
}

func (s *Store) listEndpoints(ctx context.Context, query, appID string) ([]domain.Endpoint, error) {
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx, query, appID)
	if err != nil {
		return nil, fmt.Errorf("select endpoints: %w", err)
	}
	defer rows.Close()
	var out []domain.Endpoint
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// UpdateEndpoint locks the row for the transaction so concurrent updates apply one after the
// other, and stores fn's events in the outbox in the same transaction. The lock leaves the key
// alone, so a consumer recording deliveries for the endpoint (EndpointsToDeliver) does not wait.
func (s *Store) UpdateEndpoint(ctx context.Context, appID, id string, fn func(*domain.Endpoint) ([]events.Event, error)) (domain.Endpoint, error) {
	var out domain.Endpoint
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		e, err := scanEndpoint(tx.QueryRow(ctx, `SELECT `+endpointColumns+` FROM endpoints WHERE id = $1 AND app_id = $2 FOR NO KEY UPDATE`, id, appID))
		if err != nil {
			return err
		}
		evs, err := fn(&e)
		if err != nil {
			return err
		}
		e.ID, e.AppID = id, appID
		if _, err := tx.Exec(ctx, `UPDATE endpoints SET url = $3, events = $4, description = $5, disabled = $6, secret = $7,
			previous_secret = $8, previous_until = $9, failing_since = $10, updated_at = $11 WHERE id = $1 AND app_id = $2`,
			id, appID, e.URL, e.Events, e.Description, e.Disabled, e.Secret, e.Previous, nullTime(e.PreviousUntil), nullTime(e.FailingSince), e.UpdatedAt); err != nil {
			return fmt.Errorf("update endpoint: %w", err)
		}
		out = e
		return events.InsertOutbox(ctx, tx, evs...)
	})
	return out, err
}

// DeleteEndpoint deletes the endpoint, then its deliveries, then their attempts, each statement
// waiting for what is being written to the rows before it: a consumer recording deliveries for
// the endpoint (it holds the endpoint's key), a runner recording attempts (it holds the
// deliveries). The attempts are found by the ids of the deleted deliveries, read by a statement
// that starts after those writers committed.
func (s *Store) DeleteEndpoint(ctx context.Context, appID, id string) error {
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM endpoints WHERE id = $1 AND app_id = $2`, id, appID)
		if err != nil {
			return fmt.Errorf("delete endpoint: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return domain.ErrNotFound
		}
		rows, err := tx.Query(ctx, `DELETE FROM deliveries WHERE endpoint_id = $1 RETURNING id::text`, id)
		if err != nil {
			return fmt.Errorf("delete deliveries: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("delete deliveries: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM delivery_attempts WHERE delivery_id = ANY($1::uuid[])`, ids); err != nil {
			return fmt.Errorf("delete attempts: %w", err)
		}
		return nil
	})
}

// AddDeliveries inserts the deliveries in one statement, in the transaction ctx carries (the
// consumer's inbox transaction) or on its own: one round trip however many endpoints an event
// goes to, where a COPY in a savepoint of that transaction took four.
func (s *Store) AddDeliveries(ctx context.Context, ds ...domain.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	var (
		ids, apps, endpoints, types, statuses = make([]string, len(ds)), make([]string, len(ds)), make([]string, len(ds)), make([]string, len(ds)), make([]string, len(ds))
		bodies                                = make([][]byte, len(ds))
		attempts                              = make([]int32, len(ds))
		next, created                         = make([]time.Time, len(ds)), make([]time.Time, len(ds))
		leases                                = make([]*time.Time, len(ds))
	)
	for i, d := range ds {
		ids[i], apps[i], endpoints[i], types[i], statuses[i] = d.ID, d.AppID, d.EndpointID, d.Type, d.Status
		bodies[i], attempts[i], next[i], created[i], leases[i] = d.Body, int32(d.Attempts), d.NextAttemptAt, d.CreatedAt, nullTime(d.LeaseUntil)
	}
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `INSERT INTO deliveries (id, app_id, endpoint_id, type, body, status, attempts, next_attempt_at, created_at, lease_until)
		SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::bytea[], $6::text[], $7::int[], $8::timestamptz[], $9::timestamptz[], $10::timestamptz[])`,
		ids, apps, endpoints, types, bodies, statuses, attempts, next, created, leases)
	if err != nil {
		return fmt.Errorf("insert deliveries: %w", err)
	}
	return nil
}

const deliveryColumns = `id::text, app_id::text, endpoint_id::text, type, body, status, attempts, next_attempt_at, created_at, lease_until`

func scanDelivery(row pgx.Row) (domain.Delivery, error) {
	var (
		d     domain.Delivery
		lease *time.Time
	)
	if err := row.Scan(&d.ID, &d.AppID, &d.EndpointID, &d.Type, &d.Body, &d.Status, &d.Attempts, &d.NextAttemptAt, &d.CreatedAt, &lease); err != nil {
		return domain.Delivery{}, err
	}
	d.NextAttemptAt, d.CreatedAt = d.NextAttemptAt.UTC(), d.CreatedAt.UTC()
	if lease != nil {
		d.LeaseUntil = lease.UTC()
	}
	return d, nil
}

// ClaimDue leases due deliveries. The candidates are read without locks, and only those picked
// (at most c.Limit) are locked, with SKIP LOCKED, and their lease checked again once locked:
// concurrent claimers take disjoint rows, and a claim writes only the rows it leases. The picked
// rows are found again by their keys (= ANY of an array), so the plan reads the primary key index
// and never scans the table, which keeps every delivery ever made.
func (s *Store) ClaimDue(ctx context.Context, c app.Claim) ([]domain.Delivery, error) {
	skip := c.Skip
	if skip == nil {
		skip = []string{}
	}
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx, `
		WITH due AS (
			SELECT id, endpoint_id, next_attempt_at FROM deliveries
			WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
				AND NOT (endpoint_id::text = ANY($4::text[]))
			ORDER BY next_attempt_at, id
			LIMIT $3 * 4
		), picked AS (
			SELECT id FROM (SELECT id, next_attempt_at, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, id) AS n FROM due) r
			WHERE n <= $5 ORDER BY next_attempt_at, id LIMIT $3
		), locked AS (
			SELECT id FROM deliveries
			WHERE id = ANY(ARRAY(SELECT id FROM picked)) AND status = 'pending' AND (lease_until IS NULL OR lease_until <= $1)
			FOR UPDATE SKIP LOCKED
		)
		UPDATE deliveries SET lease_until = $1 + $2::float8 * interval '1 second' WHERE id = ANY(ARRAY(SELECT id FROM locked))
		RETURNING `+deliveryColumns, c.Now, c.Lease.Seconds(), c.Limit, skip, c.PerEndpoint)
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	defer rows.Close()
	var out []domain.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("scan delivery: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	slices.SortFunc(out, func(a, b domain.Delivery) int {
		if x := a.NextAttemptAt.Compare(b.NextAttemptAt); x != 0 {
			return x
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// RenewLeases moves, in one statement, the leases still held until the times ds carry.
func (s *Store) RenewLeases(ctx context.Context, ds []domain.Delivery, until time.Time) ([]domain.Delivery, error) {
	if len(ds) == 0 {
		return nil, nil
	}
	ids, held := make([]string, len(ds)), make([]time.Time, len(ds))
	for i, d := range ds {
		ids[i], held[i] = d.ID, d.LeaseUntil
	}
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx, `UPDATE deliveries d SET lease_until = $3
		FROM unnest($1::uuid[], $2::timestamptz[]) AS h (id, held)
		WHERE d.id = h.id AND d.lease_until = h.held AND d.status = 'pending' RETURNING d.id::text`, ids, held, nullTime(until))
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	moved, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	renewed := make(map[string]bool, len(moved))
	for _, id := range moved {
		renewed[id] = true
	}
	var out []domain.Delivery
	for _, d := range ds {
		if renewed[strings.ToLower(d.ID)] { // lower case, as PostgreSQL writes a uuid
			d.LeaseUntil = until
			out = append(out, d)
		}
	}
	return out, nil
}

// RecordAttempts stores the attempts and their deliveries' state, ending their leases, in one
// statement (so in one round trip and atomically): the deliveries' updates, and an attempt for
// each delivery the update found. An attempt of a delivery deleted with its endpoint is dropped.
func (s *Store) RecordAttempts(ctx context.Context, rs ...app.Recorded) error {
	if len(rs) == 0 {
		return nil
	}
	var (
		ids, statuses, responses, errs = make([]string, len(rs)), make([]string, len(rs)), make([]string, len(rs)), make([]string, len(rs))
		attempts, codes, ms            = make([]int32, len(rs)), make([]int32, len(rs)), make([]int64, len(rs))
		next, at                       = make([]time.Time, len(rs)), make([]time.Time, len(rs))
	)
	for i, r := range rs {
		d, a := r.Delivery, r.Attempt
		ids[i], statuses[i], attempts[i], next[i] = d.ID, d.Status, int32(d.Attempts), d.NextAttemptAt
		at[i], codes[i], responses[i], errs[i], ms[i] = a.At, int32(a.Status), a.Response, a.Error, a.Duration.Milliseconds()
	}
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `
		WITH r AS (
			SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::timestamptz[], $5::timestamptz[], $6::int[], $7::text[], $8::text[], $9::bigint[])
				AS r (id, status, attempts, next_attempt_at, at, code, response, error, duration_ms)
		), updated AS (
			UPDATE deliveries d SET status = r.status, attempts = r.attempts, next_attempt_at = r.next_attempt_at, lease_until = NULL
			FROM r WHERE d.id = r.id RETURNING d.id
		)
		INSERT INTO delivery_attempts (delivery_id, at, status, response, error, duration_ms)
		SELECT r.id, r.at, r.code, r.response, r.error, r.duration_ms FROM r JOIN updated ON updated.id = r.id`,
		ids, statuses, attempts, next, at, codes, responses, errs, ms)
	if err != nil {
		return fmt.Errorf("record attempts: %w", err)
	}
	return nil
}

// ListDeliveries reads the endpoint's newest deliveries and their attempts in one snapshot.
func (s *Store) ListDeliveries(ctx context.Context, appID, endpointID string, limit int) ([]app.DeliveryView, error) {
	var out []app.DeliveryView
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE app_id = $1 AND endpoint_id = $2
			ORDER BY created_at DESC, id DESC LIMIT $3`, appID, endpointID, limit)
		if err != nil {
			return fmt.Errorf("select deliveries: %w", err)
		}
		index := map[string]int{}
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("scan delivery: %w", err)
			}
			index[d.ID] = len(out)
			out = append(out, app.DeliveryView{Delivery: d})
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(out) == 0 {
			return err
		}
		ids := make([]string, 0, len(out))
		for _, v := range out {
			ids = append(ids, v.Delivery.ID)
		}
		return attachAttempts(ctx, tx, ids, func(id string, a domain.Attempt) {
			out[index[id]].Attempts = append(out[index[id]].Attempts, a)
		})
	})
	return out, err
}

func attachAttempts(ctx context.Context, q pgxx.Querier, ids []string, add func(string, domain.Attempt)) error {
	rows, err := q.Query(ctx, `SELECT delivery_id::text, at, status, response, error, duration_ms FROM delivery_attempts
		WHERE delivery_id = ANY($1::uuid[]) ORDER BY at, ctid`, ids)
	if err != nil {
		return fmt.Errorf("select attempts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id string
			a  domain.Attempt
			ms int64
		)
		if err := rows.Scan(&id, &a.At, &a.Status, &a.Response, &a.Error, &ms); err != nil {
			return fmt.Errorf("scan attempt: %w", err)
		}
		a.At, a.Duration = a.At.UTC(), time.Duration(ms)*time.Millisecond
		add(id, a)
	}
	return rows.Err()
}

// RetryDelivery makes the delivery pending and due at now.
func (s *Store) RetryDelivery(ctx context.Context, appID, endpointID, id string, now time.Time) (app.DeliveryView, error) {
	var out app.DeliveryView
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		d, err := scanDelivery(tx.QueryRow(ctx, `UPDATE deliveries SET status = 'pending', next_attempt_at = $4
			WHERE id = $1 AND app_id = $2 AND endpoint_id = $3 RETURNING `+deliveryColumns, id, appID, endpointID, now))
		if errors.Is(err, pgx.ErrNoRows) {
			return domain.ErrDeliveryNotFound
		}
		if err != nil {
			return fmt.Errorf("retry delivery: %w", err)
		}
		out.Delivery = d
		return attachAttempts(ctx, tx, []string{id}, func(_ string, a domain.Attempt) { out.Attempts = append(out.Attempts, a) })
	})
	return out, err
}

// RecoverDeliveries makes the endpoint's failed deliveries since since pending again.
func (s *Store) RecoverDeliveries(ctx context.Context, appID, endpointID string, since, now time.Time) (int, error) {
	tag, err := pgxx.Q(ctx, s.pool).Exec(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = $4, lease_until = NULL
		WHERE app_id = $1 AND endpoint_id = $2 AND status = 'failed' AND created_at >= $3`, appID, endpointID, since, now)
	if err != nil {
		return 0, fmt.Errorf("recover deliveries: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
