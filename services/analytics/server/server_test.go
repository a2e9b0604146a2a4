package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	"github.com/berthhq/berth/pkg/testkit/moduletest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/analytics/server"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	serviceToken = "service-token-for-tests"
	readKey      = "read-key-for-tests"
)

// fakeIdentity answers key verification like identity does: only for callers presenting the service
// token, and only for the key's own app.
type fakeIdentity struct {
	identityv1.UnimplementedIdentityInternalServiceServer
	appID string
}

func (f *fakeIdentity) VerifyApiKey(ctx context.Context, req *identityv1.VerifyApiKeyRequest) (*identityv1.VerifiedApiKey, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if got := md.Get(authn.MDServiceToken); len(got) != 1 || got[0] != serviceToken {
		return nil, status.Error(codes.Unauthenticated, "invalid service token")
	}
	if req.GetApiKey() != readKey || req.GetClientId() != f.appID {
		return nil, status.Error(codes.Unauthenticated, "invalid API key")
	}
	return &identityv1.VerifiedApiKey{KeyId: "key-1", AppId: f.appID, ProjectId: uuid.NewString(), Type: "read", AppEnabled: true}, nil
}

func identityConn(t *testing.T, appID string) *grpc.ClientConn {
	t.Helper()
	srv := grpc.NewServer()
	identityv1.RegisterIdentityInternalServiceServer(srv, &fakeIdentity{appID: appID})
	return grpctest.Serve(t, srv, grpc.WithChainUnaryInterceptor(grpcx.ServiceTokenInterceptor(serviceToken)))
}

func publish(t *testing.T, bus events.Bus, source string, eventType eventsv1.Type, appID string, payload proto.Message) events.Event {
	t.Helper()
	ev, err := events.New(source, eventType, appID, payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// republish sends ev again under a fresh Nats-Msg-Id, which JetStream's duplicate window cannot
// recognise: only the consumer's inbox stands between it and a second sign-in.
func republish(t *testing.T, bus events.Bus, ev events.Event) {
	t.Helper()
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: bus.Subject(ev.Type), Data: body}
	if _, err := bus.JS.PublishMsg(context.Background(), msg, jetstream.WithMsgID(uuid.NewString())); err != nil {
		t.Fatal(err)
	}
}

func TestPublishedEventsAreListedByRoute8(t *testing.T) {
	moduletest.Stores(t, func(t *testing.T, postgres bool) {
		ctx := context.Background()
		appID, otherApp := uuid.NewString(), uuid.NewString()
		now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
		m := moduletest.Start(t, server.Module, moduletest.Options{
			Postgres:     postgres,
			Peers:        map[string]grpc.ClientConnInterface{"identity": identityConn(t, appID)},
			ServiceToken: serviceToken,
			Clock:        func() time.Time { return now },
		})
		bus, client := m.Bus, analyticsv1.NewAnalyticsServiceClient(m.Conn)

		callCtx := metadata.AppendToOutgoingContext(ctx,
			authn.MDAPIKey, readKey, authn.MDAPIKeyType, "read", authn.MDClientID, appID)
		listMarch := func() []*analyticsv1.SignIn {
			t.Helper()
			res, err := client.ListSignIns(callCtx, &analyticsv1.ListSignInsRequest{From: "2026-03-01", To: "2026-03-10"})
			if err != nil {
				t.Fatalf("ListSignIns: %v", err)
			}
			if int(res.GetItemsLength()) != len(res.GetItems()) || res.GetKind() != "analyticsSignIn" {
				t.Fatalf("list kind %q itemsLength %d with %d items", res.GetKind(), res.GetItemsLength(), len(res.GetItems()))
			}
			return res.GetItems()
		}

		ada, tenantID := uuid.NewString(), uuid.NewString()
		publish(t, bus, "tenant", tenantv1.EventTenantCreated, appID, &tenantv1.TenantChanged{
			AppId: appID, TenantId: tenantID, Tenant: &tenantv1.Tenant{Kind: "tenant", Id: tenantID, Name: "Acme", PaidUnits: "5"},
		})
		signIn := publish(t, bus, "identity", identityv1.EventUserSignedIn, appID, &identityv1.UserSignedIn{
			AppId: appID, UserId: ada, TenantRef: tenantID, At: "2026-03-09T10:11:12.345Z", Ip: "203.0.113.4",
			User: &identityv1.TenantUser{Id: ada, AppId: appID, Name: "Ada", NewsletterMemberId: "nl-ada", TenantId: true},
		})
		publish(t, bus, "identity", identityv1.EventUserSignedIn, otherApp, &identityv1.UserSignedIn{
			AppId: otherApp, UserId: uuid.NewString(), At: "2026-03-09T10:00:00Z",
		})

		// The tenant comes through its own consumer, so it may join the item after the sign-in.
		var items []*analyticsv1.SignIn
		testkit.Eventually(t, "the sign-in is listed with its tenant", func() bool {
			items = listMarch()
			return len(items) == 1 && items[0].GetUser().GetTenant() != nil
		})
		got := items[0]
		if got.GetId() != signIn.ID || got.GetLastSignInAt() != "2026-03-09T10:11:12Z" || got.GetDaysSinceLastSignIn() != "1" ||
			got.GetNewsletterMemberId() != "nl-ada" {
			t.Fatalf("item %v, want sign-in %s at 2026-03-09T10:11:12Z, 1 day ago, newsletter member nl-ada", got, signIn.ID)
		}
		u := got.GetUser()
		if u.GetId() != ada || u.GetAppId() != appID || u.GetName() != "Ada" || !u.GetTenantId() ||
			u.GetTenant().GetId() != tenantID || u.GetTenant().GetName() != "Acme" || u.GetTenant().GetPaidUnits() != "5" {
			t.Fatalf("item user %v, want Ada with tenant Acme", u)
		}

		// The same sign-in again under another message id, then a user update and a marker
		// sign-in. One consumer applies identity's stream in order, so once the marker is listed
		// the duplicate and the update have been handled.
		republish(t, bus, signIn)
		publish(t, bus, "identity", identityv1.EventUserUpdated, appID, &identityv1.UserChanged{
			AppId: appID, UserId: ada, TenantRef: tenantID,
			User: &identityv1.TenantUser{Id: ada, AppId: appID, Name: "Ada Lovelace", NewsletterMemberId: "nl-ada", TenantId: true},
		})
		marker := publish(t, bus, "identity", identityv1.EventUserSignedIn, appID, &identityv1.UserSignedIn{
			AppId: appID, UserId: uuid.NewString(), At: "2026-03-10T09:00:00Z",
			User: &identityv1.TenantUser{Name: "Marker"},
		})
		testkit.Eventually(t, "the marker sign-in is listed", func() bool {
			items = listMarch()
			for _, it := range items {
				if it.GetId() == marker.ID {
					return true
				}
			}
			return false
		})
		if len(items) != 2 || items[0].GetId() != marker.ID || items[1].GetId() != signIn.ID {
			t.Fatalf("listed %v, want the marker then the original sign-in, once", items)
		}
		if items[0].GetDaysSinceLastSignIn() != "0" || items[0].GetUser().GetTenant() != nil || items[0].GetUser().GetTenantId() {
			t.Fatalf("marker item %v, want today's sign-in of a user without tenant", items[0])
		}
		if name := items[1].GetUser().GetName(); name != "Ada Lovelace" {
			t.Fatalf("the earlier sign-in shows user name %q, want the updated %q", name, "Ada Lovelace")
		}

		// Days outside the range are not listed.
		res, err := client.ListSignIns(callCtx, &analyticsv1.ListSignInsRequest{From: "2026-03-10", To: "2026-03-10"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GetItems()) != 1 || res.GetItems()[0].GetId() != marker.ID {
			t.Fatalf("March 10 listed %v, want only the marker", res.GetItems())
		}
	})
}

func TestRoute8RefusesBadDatesAndMissingKeys(t *testing.T) {
	appID := uuid.NewString()
	m := moduletest.Start(t, server.Module, moduletest.Options{
		Peers:        map[string]grpc.ClientConnInterface{"identity": identityConn(t, appID)},
		ServiceToken: serviceToken,
	})
	client := analyticsv1.NewAnalyticsServiceClient(m.Conn)
	withKey := metadata.AppendToOutgoingContext(context.Background(),
		authn.MDAPIKey, readKey, authn.MDAPIKeyType, "read", authn.MDClientID, appID)
	tests := []struct {
		name      string
		ctx       context.Context
		from, to  string
		code      codes.Code
		wantField string
	}{
		{"no credentials", context.Background(), "2026-03-01", "2026-03-02", codes.Unauthenticated, ""},
		{"a key of another app", metadata.AppendToOutgoingContext(context.Background(),
			authn.MDAPIKey, readKey, authn.MDAPIKeyType, "read", authn.MDClientID, uuid.NewString()), "2026-03-01", "2026-03-02", codes.Unauthenticated, ""},
		{"missing to", withKey, "2026-03-01", "", codes.InvalidArgument, "to"},
		{"impossible from", withKey, "2026-02-30", "2026-03-02", codes.InvalidArgument, "from"},
		{"367 days", withKey, "2026-01-01", "2027-01-02", codes.InvalidArgument, "to"},
		{"valid and empty", withKey, "2026-01-01", "2027-01-01", codes.OK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := client.ListSignIns(tc.ctx, &analyticsv1.ListSignInsRequest{From: tc.from, To: tc.to})
			st := status.Convert(err)
			if st.Code() != tc.code || grpcx.FieldOf(st) != tc.wantField {
				t.Fatalf("ListSignIns = %v (field %q), want %v on %q", err, grpcx.FieldOf(st), tc.code, tc.wantField)
			}
			if tc.code == codes.OK && (res.GetKind() != "analyticsSignIn" || len(res.GetItems()) != 0) {
				t.Fatalf("ListSignIns = %v, want an empty analyticsSignIn list", res)
			}
		})
	}
}

func TestBuildRefusesToStartWithoutItsIdentityConnection(t *testing.T) {
	if _, err := server.New(context.Background(), server.Config{}); err == nil {
		t.Fatal("New without an identity connection succeeded")
	}
	svc, err := server.New(context.Background(), server.Config{Identity: identityConn(t, uuid.NewString())})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if err := svc.Run(context.Background()); err == nil {
		t.Fatal("Run without a bus succeeded")
	}
}
