package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// RecordAuditEntry inserts the entry; a stored id wins.
func (s *Store) RecordAuditEntry(ctx context.Context, e domain.AuditEntry) error {
	fields := e.ChangedFields
	if fields == nil {
		fields = []string{}
	}
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `insert into analytics_audit_entries (id, app_id, at, action, target_type,
			target_id, actor_kind, actor_id, actor_key_type, request_id, client_address, changed_fields)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) on conflict (id) do nothing`,
		e.ID, e.AppID, e.At, e.Action, e.TargetType, e.TargetID, e.ActorKind, e.ActorID, e.ActorKeyType,
		e.RequestID, e.ClientAddress, fields)
	if err != nil {
		return fmt.Errorf("insert audit entry %s: %w", e.ID, err)
	}
	return nil
}

// auditSelected is the filter as SQL: the app and range, and each optional exact match ("" in its
// parameter matches anything).
const auditSelected = `from analytics_audit_entries where app_id = $1 and at >= $2 and at < $3
	and ($4 = '' or actor_kind = $4) and ($5 = '' or actor_id = $5)
	and ($6 = '' or target_type = $6) and ($7 = '' or target_id = $7) and ($8 = '' or action = $8)`

const auditColumns = `select id::text, at, action, target_type, target_id, actor_kind, actor_id, actor_key_type,
	request_id, client_address, changed_fields `

// auditSQL is f's count and list queries with their arguments. A page (f.Before, f.Limit) is one
// range scan of analytics_audit_entries_app_at (app_id, at desc, id desc): it starts below the
// cursor's (at, id) and stops after f.Limit rows, and the count stops there too, so a page costs the
// same wherever it is in the range.
func auditSQL(f domain.AuditFilter) (count, list string, args []any) {
	args = []any{f.AppID, f.From, f.To, f.ActorKind, f.ActorID, f.TargetType, f.TargetID, f.Action}
	where := auditSelected
	if f.Before != nil {
		args = append(args, f.Before.At, f.Before.ID)
		where += fmt.Sprintf(` and (at, id) < ($%d, $%d::uuid)`, len(args)-1, len(args))
	}
	order := ` order by at desc, id desc`
	if f.Limit > 0 {
		args = append(args, f.Limit)
		order += fmt.Sprintf(` limit $%d`, len(args))
		return `select count(*) from (select 1 ` + where + order + `) page`, auditColumns + where + order, args
	}
	return `select count(*) ` + where, auditColumns + where + order, args
}

// VisitAuditEntries visits the selected entries from one snapshot.
func (s *Store) VisitAuditEntries(ctx context.Context, f domain.AuditFilter, v app.Visitor[domain.AuditEntry]) error {
	count, list, args := auditSQL(f)
	return visit(ctx, s, count, list, args, v, func(rows pgx.Rows) (domain.AuditEntry, error) {
		e := domain.AuditEntry{AppID: f.AppID}
		if err := rows.Scan(&e.ID, &e.At, &e.Action, &e.TargetType, &e.TargetID, &e.ActorKind, &e.ActorID,
			&e.ActorKeyType, &e.RequestID, &e.ClientAddress, &e.ChangedFields); err != nil {
			return e, fmt.Errorf("scan audit entry: %w", err)
		}
		e.At = e.At.UTC()
		if len(e.ChangedFields) == 0 {
			e.ChangedFields = nil // as recorded: an entry without changed fields has none
		}
		return e, nil
	})
}

// SetAuditRetention upserts the app's retention.
func (s *Store) SetAuditRetention(ctx context.Context, appID string, days int) error {
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `insert into analytics_audit_retention (app_id, days) values ($1, $2)
		on conflict (app_id) do update set days = excluded.days`, appID, days)
	if err != nil {
		return fmt.Errorf("set audit retention of %s: %w", appID, err)
	}
	return nil
}

// AuditRetention reads the app's retention, the default without a row.
func (s *Store) AuditRetention(ctx context.Context, appID string) (int, error) {
	var days int
	err := pgxx.Q(ctx, s.pool).QueryRow(ctx, `select days from analytics_audit_retention where app_id = $1`, appID).Scan(&days)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.DefaultAuditRetentionDays, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read audit retention of %s: %w", appID, err)
	}
	return days, nil
}

// PruneAuditEntries deletes, in batches, the entries older than their app's retention (the default
// for apps without a row). Days are counted in UTC, whatever the session's time zone, so a day is
// never 23 or 25 hours and the cut matches the memory store's.
func (s *Store) PruneAuditEntries(ctx context.Context, now time.Time) (int, error) {
	const batch = 1000
	total := 0
	for {
		tag, err := s.pool.Exec(ctx, `delete from analytics_audit_entries where id in (
			select e.id from analytics_audit_entries e left join analytics_audit_retention r on r.app_id = e.app_id
			where e.at < (($1::timestamptz at time zone 'UTC') - make_interval(days => coalesce(r.days, $2::int))) at time zone 'UTC'
			limit $3)`,
			now, domain.DefaultAuditRetentionDays, batch)
		if err != nil {
			return total, fmt.Errorf("prune audit entries: %w", err)
		}
		total += int(tag.RowsAffected())
		if tag.RowsAffected() < batch {
			return total, nil
		}
	}
}
