package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	"github.com/berthhq/berth/pkg/testkit/moduletest"
	"github.com/berthhq/berth/services/analytics/server"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

const adminToken = "admin-token-for-tests"

// chunks reads a whole streamed list.
func chunks[C any](t *testing.T, stream grpc.ServerStreamingClient[C]) ([]*C, error) {
	t.Helper()
	var out []*C
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
}

// headed is what every list chunk has.
type headed interface {
	proto.Message
	GetHead() *analyticsv1.ListHead
}

// checkChunks requires the head in the first chunk only, with the kind and the number of items
// all chunks hold, and chunks of at most 128 items.
func checkChunks[C headed](t *testing.T, cs []C, kind string, count func(C) int) int {
	t.Helper()
	if len(cs) == 0 {
		t.Fatal("the stream sent nothing: even an empty list sends its head")
	}
	total := 0
	for i, c := range cs {
		if (c.GetHead() != nil) != (i == 0) {
			t.Fatalf("chunk %d head %v: only the first carries one", i, c.GetHead())
		}
		if n := count(c); n > 128 || (n == 0 && i > 0) {
			t.Fatalf("chunk %d holds %d items", i, n)
		}
		total += count(c)
	}
	if h := cs[0].GetHead(); h.GetKind() != kind || int(h.GetItemsLength()) != total {
		t.Fatalf("head %v, but the chunks hold %d items of kind %s", h, total, kind)
	}
	return total
}

func TestMoneyEventsAreStreamedByRoutes6And7AndRebuiltTheSame(t *testing.T) {
	moduletest.Stores(t, func(t *testing.T, postgres bool) {
		appID := uuid.NewString()
		m := moduletest.Start(t, server.Module, moduletest.Options{
			Postgres: postgres, AdminToken: adminToken, ServiceToken: serviceToken,
			Peers: map[string]grpc.ClientConnInterface{"identity": identityConn(t, appID)},
		})
		client := analyticsv1.NewAnalyticsServiceClient(m.Conn)
		ctx := metadata.AppendToOutgoingContext(context.Background(), authn.MDAPIKey, readKey, authn.MDAPIKeyType, "read", authn.MDClientID, appID)
		today := time.Now().UTC().Format(time.DateOnly)
		rng := &analyticsv1.ListRangeRequest{From: today, To: today}

		userID, tenantID := uuid.NewString(), uuid.NewString()
		publish(t, m.Bus, "tenant", tenantv1.EventTenantCreated, appID, &tenantv1.TenantChanged{
			AppId: appID, TenantId: tenantID, Tenant: &tenantv1.Tenant{Kind: "tenant", Id: tenantID, Name: "Acme"}})
		publish(t, m.Bus, "identity", identityv1.EventUserUpdated, appID, &identityv1.UserChanged{
			AppId: appID, UserId: userID, TenantRef: tenantID, User: &identityv1.TenantUser{Id: userID, AppId: appID, Name: "Ada", NewsletterMemberId: "nl-ada"}})
		const payments = 300 // three chunks
		now := time.Now().UTC()
		for i := range payments {
			publish(t, m.Bus, "billing", billingv1.EventPaymentOneTime, appID, &billingv1.MoneyChanged{
				AppId: appID, TenantId: tenantID, Revision: int64(i + 1), At: now.Format(time.RFC3339Nano), Units: 1, UnitsBefore: int64(i),
				PriceId: "price_units", CustomerId: "cus_1", PaymentId: fmt.Sprintf("cs_%d", i), UserId: userID})
		}
		sub := publish(t, m.Bus, "billing", billingv1.EventSubscriptionStarted, appID, &billingv1.MoneyChanged{
			AppId: appID, TenantId: tenantID, Revision: payments + 1, At: now.Format(time.RFC3339Nano), SubscriptionId: "sub_1",
			PriceId: "price_m", CustomerId: "cus_1", PaidUntil: now.AddDate(0, 1, 0).Format(time.RFC3339), PaymentId: "cs_sub", UserId: userID})

		oneTimes := func() ([]*analyticsv1.OneTimePaymentChunk, error) {
			stream, err := client.ListOneTimePayments(ctx, rng)
			if err != nil {
				return nil, err
			}
			return chunks(t, stream)
		}
		subs := func() []*analyticsv1.SubscriptionChunk {
			stream, err := client.ListSubscriptions(ctx, rng)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := chunks(t, stream)
			if err != nil {
				t.Fatal(err)
			}
			return cs
		}
		testkit.Eventually(t, "every payment and the subscription are listed", func() bool {
			cs, err := oneTimes()
			return err == nil && cs[0].GetHead().GetItemsLength() == payments && subs()[0].GetHead().GetItemsLength() == 1
		})
		cs, err := oneTimes()
		if err != nil {
			t.Fatal(err)
		}
		if n := checkChunks(t, cs, "analyticsOneTimePayment", func(c *analyticsv1.OneTimePaymentChunk) int { return len(c.GetItems()) }); n != payments {
			t.Fatalf("listed %d payments, want %d", n, payments)
		}
		if it := cs[0].GetItems()[0]; it.GetUser().GetName() != "Ada" || it.GetUser().GetTenant().GetName() != "Acme" || it.GetNewsletterMemberId() != "nl-ada" || !it.GetPaid() || it.GetUnits() != 1 {
			t.Fatalf("item %v", it)
		}
		sc := subs()
		checkChunks(t, sc, "analyticsSubscription", func(c *analyticsv1.SubscriptionChunk) int { return len(c.GetItems()) })
		if s := sc[0].GetItems()[0]; s.GetPspxSubscriptionId() != "sub_1" || s.GetUserId() != userID || s.GetTenantId() != tenantID || !s.GetPaid() ||
			s.GetUntil() != float64(now.AddDate(0, 1, 0).Unix()) || s.GetUser().GetName() != "Ada" {
			t.Fatalf("subscription item %v", s)
		}
		tenants, err := client.ListTenants(ctx, rng)
		if err != nil {
			t.Fatal(err)
		}
		tc, err := chunks(t, tenants)
		if err != nil {
			t.Fatal(err)
		}
		checkChunks(t, tc, "analyticsTenant", func(c *analyticsv1.TenantChunk) int { return len(c.GetItems()) })
		if ti := tc[0].GetItems(); len(ti) != 1 || ti[0].GetName() != "Acme" || len(ti[0].GetUsers()) != 1 || ti[0].GetUsers()[0].GetName() != "Ada" {
			t.Fatalf("tenant items %v", ti)
		}

		// The same subscription event again under another message id: nothing changes.
		republish(t, m.Bus, sub)

		// A rebuild from the streams answers the same.
		admin := analyticsv1.NewAnalyticsAdminServiceClient(m.Conn)
		adminCtx := metadata.AppendToOutgoingContext(context.Background(), authn.MDAdminToken, adminToken)
		res, err := admin.RebuildReadModels(adminCtx, &analyticsv1.RebuildReadModelsRequest{})
		if err != nil || res.GetApplied() < payments+3 {
			t.Fatalf("rebuild: %v, %v; want at least %d events applied", res, err, payments+3)
		}
		again, err := oneTimes()
		if err != nil || !equalChunks(cs, again) || !equalChunks(sc, subs()) {
			t.Fatalf("after the rebuild the lists differ (%v)", err)
		}
		if _, err := admin.RebuildReadModels(ctx, &analyticsv1.RebuildReadModelsRequest{}); status.Code(err) != codes.Unauthenticated && status.Code(err) != codes.PermissionDenied {
			t.Fatalf("a rebuild with an API key: %v, want refused", err)
		}
	})
}

func equalChunks[C proto.Message](a, b []C) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestStreamedListsRefuseBadRangesAndOtherCredentialsBeforeSendingAnything(t *testing.T) {
	appID := uuid.NewString()
	m := moduletest.Start(t, server.Module, moduletest.Options{
		Peers: map[string]grpc.ClientConnInterface{"identity": identityConn(t, appID)}, ServiceToken: serviceToken,
	})
	client := analyticsv1.NewAnalyticsServiceClient(m.Conn)
	withKey := metadata.AppendToOutgoingContext(context.Background(), authn.MDAPIKey, readKey, authn.MDAPIKeyType, "read", authn.MDClientID, appID)
	tests := []struct {
		name      string
		ctx       context.Context
		from, to  string
		code      codes.Code
		wantField string
	}{
		{"no credentials", context.Background(), "2026-03-01", "2026-03-02", codes.Unauthenticated, ""},
		{"a bearer token", metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer abc.def.ghi"), "2026-03-01", "2026-03-02", codes.Unauthenticated, ""},
		{"from after to", withKey, "2026-03-02", "2026-03-01", codes.InvalidArgument, "from"},
		{"367 days", withKey, "2026-01-01", "2027-01-02", codes.InvalidArgument, "to"},
	}
	lists := map[string]func(context.Context, *analyticsv1.ListRangeRequest) error{
		"subscriptions": func(ctx context.Context, r *analyticsv1.ListRangeRequest) error {
			s, err := client.ListSubscriptions(ctx, r)
			if err == nil {
				_, err = chunks(t, s)
			}
			return err
		},
		"one-time payments": func(ctx context.Context, r *analyticsv1.ListRangeRequest) error {
			s, err := client.ListOneTimePayments(ctx, r)
			if err == nil {
				_, err = chunks(t, s)
			}
			return err
		},
		"tenants": func(ctx context.Context, r *analyticsv1.ListRangeRequest) error {
			s, err := client.ListTenants(ctx, r)
			if err == nil {
				_, err = chunks(t, s)
			}
			return err
		},
	}
	for list, call := range lists {
		for _, tc := range tests {
			t.Run(list+"/"+tc.name, func(t *testing.T) {
				err := call(tc.ctx, &analyticsv1.ListRangeRequest{From: tc.from, To: tc.to})
				st := status.Convert(err)
				if st.Code() != tc.code || grpcx.FieldOf(st) != tc.wantField {
					t.Fatalf("%v (field %q), want %v on %q", err, grpcx.FieldOf(st), tc.code, tc.wantField)
				}
			})
		}
	}
}

// With identity unreachable, a key identity verified before keeps working for the cache's
// lifetime (analytics answers from its own store), and a key it never saw is refused at once with
// Unavailable, which the edge answers as a 500 in the route's family, rather than hanging.
func TestCachedKeysKeepListsAnsweringWhileIdentityIsUnreachable(t *testing.T) {
	appID := uuid.NewString()
	idSrv := grpc.NewServer()
	identityv1.RegisterIdentityInternalServiceServer(idSrv, &fakeIdentity{appID: appID})
	idConn := grpctest.Serve(t, idSrv, grpc.WithChainUnaryInterceptor(grpcx.ServiceTokenInterceptor(serviceToken)))
	m := moduletest.Start(t, server.Module, moduletest.Options{
		Peers: map[string]grpc.ClientConnInterface{"identity": idConn}, ServiceToken: serviceToken,
	})
	client := analyticsv1.NewAnalyticsServiceClient(m.Conn)
	list := func(key string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ctx = metadata.AppendToOutgoingContext(ctx, authn.MDAPIKey, key, authn.MDAPIKeyType, "read", authn.MDClientID, appID)
		stream, err := client.ListSubscriptions(ctx, &analyticsv1.ListRangeRequest{From: "2026-03-01", To: "2026-03-31"})
		if err == nil {
			_, err = chunks(t, stream)
		}
		return err
	}
	if err := list(readKey); err != nil {
		t.Fatalf("with identity up: %v", err)
	}
	idSrv.Stop()
	if err := list(readKey); err != nil {
		t.Fatalf("a cached key with identity down: %v", err)
	}
	if err := list("a-key-identity-never-verified"); status.Code(err) != codes.Unavailable {
		t.Fatalf("an uncached key with identity down: %v, want Unavailable (not a hang past the deadline)", err)
	}
}

// With the database gone, a list is refused at once (Internal or Unavailable, a 500 in the route's
// family) instead of hanging to the deadline, and the same process answers again once the
// database is back.
func TestListsFailFastWhileTheDatabaseIsGoneAndRecoverWithoutARestart(t *testing.T) {
	appID := uuid.NewString()
	m := moduletest.Start(t, server.Module, moduletest.Options{
		Postgres: true, Peers: map[string]grpc.ClientConnInterface{"identity": identityConn(t, appID)}, ServiceToken: serviceToken,
	})
	client := analyticsv1.NewAnalyticsServiceClient(m.Conn)
	list := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ctx = metadata.AppendToOutgoingContext(ctx, authn.MDAPIKey, readKey, authn.MDAPIKeyType, "read", authn.MDClientID, appID)
		stream, err := client.ListOneTimePayments(ctx, &analyticsv1.ListRangeRequest{From: "2026-03-01", To: "2026-03-31"})
		if err == nil {
			_, err = chunks(t, stream)
		}
		return err
	}
	if err := list(); err != nil {
		t.Fatalf("with the database up: %v", err)
	}
	cfg := m.Process.Pool.Config().ConnConfig.Copy()
	db := cfg.Database
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	do := func(sql string, args ...any) {
		t.Helper()
		if _, err := admin.Exec(context.Background(), sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	do("alter database " + pgx.Identifier{db}.Sanitize() + " allow_connections false")
	do("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1", db)
	if code := status.Code(list()); code != codes.Internal && code != codes.Unavailable {
		t.Fatalf("a list with the database gone: %v, want Internal or Unavailable before the deadline", code)
	}
	do("alter database " + pgx.Identifier{db}.Sanitize() + " allow_connections true")
	testkit.Eventually(t, "lists answer again once the database is back", func() bool { return list() == nil })
}
