package events_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testTables stand for a service's own state: account is a state change that emits an event,
// effect is a consumer's effect. effect has no key on event_id on purpose, so only the inbox can
// keep an event from being applied twice.
var testTables = fstest.MapFS{"0001_test_tables.sql": {Data: []byte(`
	create table account (id text primary key);
	create table effect (n serial primary key, consumer text not null, event_id uuid not null);`)}}

// pgPool is a database with the events tables and the test tables.
func pgPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return pgtest.New(t, "events", func(ctx context.Context, pool *pgxpool.Pool) error {
		if err := pgxx.Migrate(ctx, pool, "events", events.Migrations); err != nil {
			return err
		}
		return pgxx.Migrate(ctx, pool, "events-test", testTables)
	})
}

// newEvent builds a valid event of type typ about user: its payload is the message declared for
// typ, with appId "app1" and user in its userId or, for a tenant payload, tenantId.
func newEvent(t *testing.T, typ eventsv1.Type, user string) events.Event {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(events.Payload(typ).FullName())
	if err != nil {
		t.Fatal(err)
	}
	payload := mt.New()
	fields := payload.Descriptor().Fields()
	payload.Set(fields.ByName("appId"), protoreflect.ValueOfString("app1"))
	for _, name := range []protoreflect.Name{"userId", "tenantId"} {
		if f := fields.ByName(name); f != nil {
			payload.Set(f, protoreflect.ValueOfString(user))
			break
		}
	}
	ev, err := events.New("identity", typ, "app1", payload.Interface())
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// eventually is the kit's bounded wait, under the short name this package's suites call it by.
var eventually = testkit.Eventually

func countEffects(t *testing.T, pool *pgxpool.Pool, eventID string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "select count(*) from effect where event_id = $1", eventID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func decodeRaw(t *testing.T, data []byte) events.Event {
	t.Helper()
	var ev events.Event
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}
