package postgres

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Component is the name the analytics tables' migrations are recorded under.
const Component = "analytics"

// Migrate applies the analytics tables' migrations and the shared events tables.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgxx.MigrateSets(ctx, pool, pgxx.Set{Component: Component, Files: migrationFiles, Dir: "migrations"},
		pgxx.Set{Component: "events", Files: events.Migrations})
}

// Store implements app.Store.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a store on a migrated database.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// RecordSignIn inserts the sign-in; a stored id wins.
func (s *Store) RecordSignIn(ctx context.Context, in domain.SignIn) error {
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `insert into analytics_sign_ins (id, app_id, user_id, tenant_ref, at, ip)
		values ($1, $2, $3, $4, $5, $6) on conflict (id) do nothing`,
		in.ID, in.AppID, in.UserID, nullable(in.TenantRef), in.At, in.IP)
	if err != nil {
		return fmt.Errorf("insert sign-in: %w", err)
	}
	return nil
}

// PutUser upserts the snapshot; the WHERE of the conflict branch keeps a newer stored one, and
// deleted only ever turns on.
func (s *Store) PutUser(ctx context.Context, u app.UserSnapshot) error {
	data, err := marshal(u.User)
	if err != nil {
		return fmt.Errorf("encode user %s: %w", u.UserID, err)
	}
	_, err = pgxx.Q(ctx, s.pool).Exec(ctx, `insert into analytics_users (app_id, id, tenant_ref, deleted, as_of, pb)
		values ($1, $2, $3, $4, $5, $6)
		on conflict (app_id, id) do update set tenant_ref = excluded.tenant_ref, as_of = excluded.as_of,
			pb = excluded.pb, data = null, deleted = analytics_users.deleted or excluded.deleted
		where analytics_users.as_of <= excluded.as_of`,
		u.AppID, u.UserID, nullable(u.TenantRef), u.Deleted, u.AsOf, data)
	if err != nil {
		return fmt.Errorf("upsert user %s: %w", u.UserID, err)
	}
	return nil
}

// MarkUserDeleted sets deleted, inserting a data-less snapshot when there is none.
func (s *Store) MarkUserDeleted(ctx context.Context, appID, userID, tenantRef string, at time.Time) error {
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `insert into analytics_users (app_id, id, tenant_ref, deleted, as_of)
		values ($1, $2, $3, true, $4)
		on conflict (app_id, id) do update set deleted = true,
			as_of = greatest(analytics_users.as_of, excluded.as_of)`,
		appID, userID, nullable(tenantRef), at)
	if err != nil {
		return fmt.Errorf("mark user %s deleted: %w", userID, err)
	}
	return nil
}

// PutTenant upserts the snapshot unless the stored one is newer.
func (s *Store) PutTenant(ctx context.Context, t app.TenantSnapshot) error {
	data, err := marshal(t.Tenant)
	if err != nil {
		return fmt.Errorf("encode tenant %s: %w", t.TenantID, err)
	}
	_, err = pgxx.Q(ctx, s.pool).Exec(ctx, `insert into analytics_tenants (app_id, id, as_of, pb)
		values ($1, $2, $3, $4)
		on conflict (app_id, id) do update set as_of = excluded.as_of, pb = excluded.pb, data = null
		where analytics_tenants.as_of <= excluded.as_of`,
		t.AppID, t.TenantID, t.AsOf, data)
	if err != nil {
		return fmt.Errorf("upsert tenant %s: %w", t.TenantID, err)
	}
	_, err = pgxx.Q(ctx, s.pool).Exec(ctx, `insert into analytics_tenant_days (app_id, day, tenant_id)
		values ($1, $2, $3) on conflict do nothing`, t.AppID, domain.Day(t.AsOf), t.TenantID)
	if err != nil {
		return fmt.Errorf("record tenant %s change day: %w", t.TenantID, err)
	}
	return nil
}

// payerColumns select the snapshot of the user of alias u and of its tenant t, scanned by
// payerScan.
const payerColumns = `u.as_of, coalesce(u.tenant_ref::text, ''), coalesce(u.deleted, false), u.pb, u.data, t.as_of, t.pb, t.data`

// payerJoins join the user whose id is in userIDColumn and that user's current tenant.
func payerJoins(alias, userIDColumn string) string {
	return ` left join analytics_users u on u.app_id = ` + alias + `.app_id and u.id = ` + userIDColumn +
		` left join analytics_tenants t on t.app_id = u.app_id and t.id = u.tenant_ref`
}

// listSignIns joins each sign-in to its user's snapshot and that snapshot's current tenant. ids
// are read as text so they come back in the canonical lower-case form.
var listSignIns = `select s.id::text, s.user_id::text, coalesce(s.tenant_ref::text, ''), s.at, s.ip, ` + payerColumns + `
	from analytics_sign_ins s` + payerJoins("s", "s.user_id") + `
	where s.app_id = $1 and s.at >= $2 and s.at < $3
	order by s.at desc, s.id desc`

// ListSignIns reads the app's sign-ins in [from, to) with their snapshots.
func (s *Store) ListSignIns(ctx context.Context, appID string, from, to time.Time) ([]app.SignInRecord, error) {
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx, listSignIns, appID, from, to)
	if err != nil {
		return nil, fmt.Errorf("select sign-ins: %w", err)
	}
	defer rows.Close()
	out := []app.SignInRecord{}
	for rows.Next() {
		rec := app.SignInRecord{SignIn: domain.SignIn{AppID: appID}}
		in := &rec.SignIn
		var ps payerScan
		if err := rows.Scan(append([]any{&in.ID, &in.UserID, &in.TenantRef, &in.At, &in.IP}, ps.dest()...)...); err != nil {
			return nil, fmt.Errorf("scan sign-in: %w", err)
		}
		in.At = in.At.UTC()
		payer, err := ps.payer(appID, in.UserID)
		if err != nil {
			return nil, err
		}
		rec.User, rec.Tenant = payer.User, payer.Tenant
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sign-ins: %w", err)
	}
	return out, nil
}

// payerScan receives payerColumns.
type payerScan struct {
	userAsOf, tenantAsOf *time.Time
	userRef              string
	userDeleted          bool
	user, tenant         stored
}

func (p *payerScan) dest() []any {
	return []any{&p.userAsOf, &p.userRef, &p.userDeleted, &p.user.pb, &p.user.json, &p.tenantAsOf, &p.tenant.pb, &p.tenant.json}
}

// payer decodes the scanned snapshots of user userID; no row joined (no snapshot) leaves them nil.
func (p *payerScan) payer(appID, userID string) (app.Payer, error) {
	var out app.Payer
	if p.userAsOf != nil {
		u, err := userSnapshot(appID, userID, p.userRef, p.userDeleted, *p.userAsOf, p.user)
		if err != nil {
			return out, err
		}
		out.User = &u
	}
	if p.tenantAsOf != nil {
		t := app.TenantSnapshot{AppID: appID, TenantID: p.userRef, AsOf: p.tenantAsOf.UTC(), Tenant: &tenantv1.Tenant{}}
		if err := p.tenant.decode(t.Tenant); err != nil {
			return out, fmt.Errorf("decode tenant %s: %w", p.userRef, err)
		}
		out.Tenant = &t
	}
	return out, nil
}

// userSnapshot decodes a stored user snapshot; data is empty for a user known only from its
// deletion.
func userSnapshot(appID, userID, tenantRef string, deleted bool, asOf time.Time, data stored) (app.UserSnapshot, error) {
	u := app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantRef, Deleted: deleted, AsOf: asOf.UTC()}
	if !data.empty() {
		u.User = &identityv1.TenantUser{}
		if err := data.decode(u.User); err != nil {
			return u, fmt.Errorf("decode user %s: %w", userID, err)
		}
	}
	return u, nil
}

// nullable stores an absent reference as NULL rather than an empty string a uuid column refuses.
func nullable(id string) any {
	if id == "" {
		return nil
	}
	return id
}

// marshal encodes a snapshot message as binary protobuf; a nil one (no data) is NULL.
func marshal(m proto.Message) ([]byte, error) {
	if m == nil || !m.ProtoReflect().IsValid() {
		return nil, nil
	}
	return proto.Marshal(m)
}

// stored is a snapshot as a row holds it: binary protobuf in pb, or, in a row written before
// migration 0003 and not rewritten since, protojson in json.
type stored struct{ pb, json []byte }

func (d stored) empty() bool { return d.pb == nil && d.json == nil }

// decode decodes the snapshot, skipping fields a newer producer added and this build does not know.
func (d stored) decode(into proto.Message) error {
	if d.pb != nil {
		return proto.Unmarshal(d.pb, into)
	}
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(d.json, into)
}
