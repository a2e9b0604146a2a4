package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/analytics/internal/adapters/postgres"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/app/porttest"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestStoreConformsToThePorts(t *testing.T) {
	porttest.Run(t, func(t *testing.T) (app.Store, events.Inbox) {
		pool := pgtest.New(t, "analytics", postgres.Migrate)
		return postgres.New(pool), events.NewPGInbox(pool)
	})
}

// Rows written before snapshots were stored as binary protobuf hold protojson in data; they read
// as before until an event rewrites them.
func TestSnapshotsWrittenAsJSONBeforeMigration3StillRead(t *testing.T) {
	pool := pgtest.New(t, "analytics", postgres.Migrate)
	s := postgres.New(pool)
	ctx := context.Background()
	appID, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	if _, err := pool.Exec(ctx, `insert into analytics_users (app_id, id, tenant_ref, as_of, data) values ($1, $2, $3, now(), '{"name": "Ada", "unknownField": 1}')`, appID, userID, tenantID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `insert into analytics_tenants (app_id, id, as_of, data) values ($1, $2, now(), '{"name": "Acme"}')`, appID, tenantID); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	if err := s.RecordSignIn(ctx, domain.SignIn{ID: uuid.NewString(), AppID: appID, UserID: userID, At: at}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.ListSignIns(ctx, appID, at.Add(-time.Hour), at.Add(time.Hour))
	if err != nil || len(recs) != 1 || recs[0].User.User.GetName() != "Ada" || recs[0].Tenant.Tenant.GetName() != "Acme" {
		t.Fatalf("ListSignIns = %+v, %v; want Ada of Acme from the JSON rows", recs, err)
	}
	// An event rewrites the row in the binary form and clears the JSON.
	if err := s.PutUser(ctx, app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantID, AsOf: at, User: &identityv1.TenantUser{Name: "Ada L."}}); err != nil {
		t.Fatal(err)
	}
	var hasJSON, hasPB bool
	if err := pool.QueryRow(ctx, `select data is not null, pb is not null from analytics_users where id = $1`, userID).Scan(&hasJSON, &hasPB); err != nil || hasJSON || !hasPB {
		t.Fatalf("after a write: json %v, binary %v, %v", hasJSON, hasPB, err)
	}
}
