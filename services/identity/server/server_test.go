package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
	"github.com/berthhq/berth/services/identity/server"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func baseConfig(bus events.Bus) server.Config {
	return server.Config{
		Common: module.Common{Bus: bus, AdminToken: "admin", ServiceToken: "service", Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Pepper: []byte("pepper"), SecretKey: make([]byte, 32),
		Issuer: "server-test", PublicURL: "https://berth.test",
		Passwords: password.Params{MemoryKiB: 64, Time: 1, Threads: 1},
	}
}

func TestNewRejectsMissingSecrets(t *testing.T) {
	cases := map[string]func(*server.Config){
		"no pepper":        func(c *server.Config) { c.Pepper = nil },
		"short secret key": func(c *server.Config) { c.SecretKey = make([]byte, 16) },
	}
	for name, mutate := range cases {
		cfg := baseConfig(events.Bus{})
		mutate(&cfg)
		if s, err := server.New(context.Background(), cfg); err == nil {
			s.Close()
			t.Errorf("%s: want error", name)
		}
	}
}

func TestRunWithoutBusFails(t *testing.T) {
	s, err := server.New(context.Background(), baseConfig(events.Bus{}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Run(context.Background()); err == nil {
		t.Fatal("Run without a bus: want error")
	}
}

// TestAdminChangeReachesJetStream proves the wiring end to end for both store kinds: an admin call
// over gRPC changes state, the outbox relay publishes the event, and it lands in the IDENTITY stream.
func TestAdminChangeReachesJetStream(t *testing.T) {
	for _, store := range []string{"memory", "postgres"} {
		t.Run(store, func(t *testing.T) {
			bus, _ := natstest.New(t)
			cfg := baseConfig(bus)
			if store == "postgres" {
				// The template is only a clean, migrated database; server.New migrates again (no-op).
				cfg.DatabaseURL = pgtest.URL(t, "identity-server", func(context.Context, *pgxpool.Pool) error { return nil })
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := server.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			runDone := make(chan error, 1)
			runCtx, stopRun := context.WithCancel(ctx)
			go func() { runDone <- s.Run(runCtx) }()
			defer func() {
				stopRun()
				if err := <-runDone; err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("Run: %v", err)
				}
			}()

			admin := identityv1.NewIdentityAdminServiceClient(dial(t, s))
			actx := withAdmin(ctx)
			p, err := admin.CreateProject(actx, &identityv1.CreateProjectRequest{Name: "p"})
			if err != nil {
				t.Fatal(err)
			}
			a, err := admin.CreateApp(actx, &identityv1.CreateAppRequest{ProjectId: p.GetId(), Name: "a"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := admin.SetAppEnabled(actx, &identityv1.SetAppEnabledRequest{AppId: a.GetId(), Enabled: false}); err != nil {
				t.Fatal(err)
			}

			ev := waitForEvent(t, ctx, bus, identityv1.EventAppChanged)
			var payload identityv1.AppChanged
			if err := ev.Decode(&payload); err != nil {
				t.Fatal(err)
			}
			if payload.GetAppId() != a.GetId() || payload.GetEnabled() || ev.AppID != a.GetId() || ev.Source != "identity" {
				t.Errorf("event %+v payload %v", ev, &payload)
			}
		})
	}
}

// fakeTenant is the tenant service's internal API as sign-up calls it; it records the calls.
type fakeTenant struct {
	tenantv1.UnimplementedTenantInternalServiceServer
	calls chan *tenantv1.CreateTenantForSignUpRequest
}

func (f *fakeTenant) CreateTenantForSignUp(ctx context.Context, req *tenantv1.CreateTenantForSignUpRequest) (*tenantv1.Tenant, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	if got := md.Get(authn.MDServiceToken); len(got) != 1 || got[0] != "service" {
		return nil, status.Error(codes.Unauthenticated, "no service token")
	}
	f.calls <- req
	return &tenantv1.Tenant{Kind: "tenant", Id: uuid.NewString(), Name: req.GetName()}, nil
}

// TestSignUpToTenantTokenWiring runs the composed service: sign-up reaches the tenant service with
// the service token, the token route is public, and the access policy accepts the issued token.
func TestSignUpToTenantTokenWiring(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	tenantSrv := grpc.NewServer()
	fake := &fakeTenant{calls: make(chan *tenantv1.CreateTenantForSignUpRequest, 1)}
	tenantv1.RegisterTenantInternalServiceServer(tenantSrv, fake)
	tenantConn := grpctest.Serve(t, tenantSrv, grpcx.ClientOptions("service", nil)...)

	for _, withTenant := range []bool{false, true} {
		cfg := baseConfig(events.Bus{})
		if withTenant {
			cfg.Tenant = tenantConn
		}
		s, err := server.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		conn := dial(t, s)
		admin := identityv1.NewIdentityAdminServiceClient(conn)
		p, err := admin.CreateProject(withAdmin(ctx), &identityv1.CreateProjectRequest{Name: "p"})
		if err != nil {
			t.Fatal(err)
		}
		// Optional verification: the wiring to the tenant service is what this is about, and this
		// server has no mailer.
		a, err := admin.CreateApp(withAdmin(ctx), &identityv1.CreateAppRequest{ProjectId: p.GetId(), Name: "a", RedirectUris: []string{"https://app.test/cb"},
			EmailVerification: "optional"})
		if err != nil {
			t.Fatal(err)
		}
		redirect, err := identityv1.NewLoginServiceClient(conn).SignUp(metadata.AppendToOutgoingContext(ctx, authn.MDServiceToken, "service"),
			&identityv1.SignUpRequest{Params: &identityv1.LoginParams{ClientId: a.GetId(), RedirectUri: "https://app.test/cb", State: "s"},
				Email: "grace@example.test", Password: "correct horse battery"})
		if !withTenant {
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("sign-up without a tenant service: %v, want Unavailable", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if req := <-fake.calls; req.GetAppId() != a.GetId() || req.GetName() != "grace@example.test" {
			t.Errorf("tenant request = %v", req)
		}
		u, _ := url.Parse(redirect.GetUrl())
		list, err := identityv1.NewTokenServiceClient(conn).ExchangeToken(ctx, &identityv1.ExchangeTokenRequest{
			ClientId: a.GetId(), GrantType: "authorization_code", RedirectUri: "https://app.test/cb", Code: u.Query().Get("code"),
		})
		if err != nil {
			t.Fatal(err)
		}
		me, err := identityv1.NewIdentityServiceClient(conn).GetMe(
			metadata.AppendToOutgoingContext(ctx, authn.MDAuthorization, "Bearer "+list.GetItems()[0].GetAccessToken()), &identityv1.GetMeRequest{})
		if err != nil || me.GetEmail() != "grace@example.test" {
			t.Errorf("GetMe with the issued token = %v, %v", me, err)
		}
	}
}

func withAdmin(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, authn.MDAdminToken, "admin")
}

func dial(t *testing.T, s *module.Process) *grpc.ClientConn {
	t.Helper()
	return grpctest.Serve(t, s.GRPC(), grpcx.ClientOptions("", nil)...)
}

// waitForEvent polls the identity stream until an event of eventType is stored, or fails when ctx
// ends. Polling bounds the wait without asserting on timing.
func waitForEvent(t *testing.T, ctx context.Context, bus events.Bus, eventType eventsv1.Type) events.Event {
	t.Helper()
	stream, err := bus.JS.Stream(ctx, bus.Stream("identity"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := stream.GetLastMsgForSubject(ctx, bus.Subject(eventType))
		if err == nil {
			var ev events.Event
			if err := json.Unmarshal(msg.Data, &ev); err != nil {
				t.Fatal(err)
			}
			return ev
		}
		if !errors.Is(err, jetstream.ErrMsgNotFound) {
			t.Fatalf("read stream: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no %s event within the deadline", eventType)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestARestartWithAnotherPepperOrSecretKeyIsRefusedNamingTheVariable protects the database's keys:
// the first start stores their check values, a restart with the same ones starts, and one with
// another pepper or secret key stops as a bad setting does, naming the variable, rather than
// answering 401 for every API key and failing to open every app's signing key.
func TestARestartWithAnotherPepperOrSecretKeyIsRefusedNamingTheVariable(t *testing.T) {
	cfg := baseConfig(events.Bus{})
	cfg.DatabaseURL = pgtest.URL(t, "identity-server", func(context.Context, *pgxpool.Pool) error { return nil })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 2 {
		s, err := server.New(ctx, cfg)
		if err != nil {
			t.Fatalf("start with the same keys: %v", err)
		}
		s.Close()
	}
	cases := []struct {
		name   string
		change func(*server.Config)
		want   []string
	}{
		{"pepper", func(c *server.Config) { c.Pepper = []byte("another pepper") }, []string{"BERTH_API_KEY_PEPPER (secret): does not match"}},
		{"secret key", func(c *server.Config) { c.SecretKey = bytes.Repeat([]byte{9}, 32) }, []string{"BERTH_SECRET_KEY (secret): does not match"}},
		{"both", func(c *server.Config) { c.Pepper, c.SecretKey = []byte("another pepper"), bytes.Repeat([]byte{9}, 32) },
			[]string{"BERTH_API_KEY_PEPPER (secret)", "BERTH_SECRET_KEY (secret)"}},
	}
	for _, c := range cases {
		changed := cfg
		c.change(&changed)
		s, err := server.New(ctx, changed)
		if err == nil {
			s.Close()
			t.Fatalf("%s changed: started", c.name)
		}
		var invalid *config.InvalidError
		if !errors.As(err, &invalid) || len(invalid.Problems) != len(c.want) {
			t.Fatalf("%s changed: %v, want %d settings refusal(s)", c.name, err, len(c.want))
		}
		for i, w := range c.want {
			if !strings.HasPrefix(invalid.Problems[i].Error(), w) {
				t.Errorf("%s changed: %q, want it to start %q", c.name, invalid.Problems[i], w)
			}
		}
	}
}
