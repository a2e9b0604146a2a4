package app_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/services/webhook/internal/adapters/memory"
	"github.com/berthhq/berth/services/webhook/internal/app"
	"github.com/berthhq/berth/services/webhook/internal/domain"
)

const secret = "whsec_test"

var now = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fakeBilling knows one customer and counts the calls it applies; fail makes the next applies fail.
// verdict, when set, is its answer to every call instead.
type fakeBilling struct {
	mu      sync.Mutex
	applied int
	fail    int
	ignore  bool
	status  string
	verdict func() (app.Applied, error)
	asked   int
	actors  []events.Actor // the actor of each call's context
}

func (f *fakeBilling) ResolvePspxCustomer(_ context.Context, customerID string, _ bool) (app.Connection, error) {
	if customerID != "cus_1" {
		return app.Connection{}, fault.NotFound("Customer not found")
	}
	return app.Connection{ID: "conn-1", Secrets: []string{secret}}, nil
}

// connApp is the app that owns conn-1, the connection of every call the fake resolves; the fake
// knows no other app's connections.
const connApp = "5d4a0f6e-8c31-4c0b-9f3e-2b7a1c9d0e11"

func (f *fakeBilling) AppConnections(_ context.Context, appID string) ([]string, error) {
	if appID == connApp {
		return []string{"conn-1"}, nil
	}
	return nil, nil
}

func (f *fakeBilling) apply(ctx context.Context) (app.Applied, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	a, _ := events.ActorFrom(ctx)
	f.actors = append(f.actors, a)
	if f.verdict != nil {
		return f.verdict()
	}
	if f.fail > 0 {
		f.fail--
		// What billing answers when the provider refused a request for its content: a status
		// that must not become route 3's answer.
		return app.Applied{}, status.Error(codes.InvalidArgument, "Invalid description")
	}
	f.applied++
	return app.Applied{Ignored: f.ignore, Status: f.status, Effect: "x"}, nil
}

func (f *fakeBilling) ApplyPspxEvent(ctx context.Context, _ string, _ bool, _ string, _ []byte) (app.Applied, error) {
	return f.apply(ctx)
}

func (f *fakeBilling) ApplyPspyPayment(ctx context.Context, _, _ string) (app.Applied, error) {
	return f.apply(ctx)
}

func newService(t *testing.T) (*app.Service, *fakeBilling, *memory.Store) {
	t.Helper()
	b, s := &fakeBilling{}, memory.New()
	svc, err := app.New(app.Config{Store: s, Billing: b, Host: "berth.test", Clock: func() time.Time { return now }, NewID: uuid.NewString})
	if err != nil {
		t.Fatal(err)
	}
	return svc, b, s
}

func TestNewRequiresStoreBillingHostAndIDs(t *testing.T) {
	store, billing := memory.New(), &fakeBilling{}
	for name, c := range map[string]app.Config{
		"no store":   {Billing: billing, Host: "berth.test", NewID: uuid.NewString},
		"no billing": {Store: store, Host: "berth.test", NewID: uuid.NewString},
		"no host":    {Store: store, Billing: billing, NewID: uuid.NewString},
		"no ids":     {Store: store, Billing: billing, Host: "berth.test"},
	} {
		if _, err := app.New(c); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
}

func signed(body string) app.Delivery {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(fmt.Appendf(nil, "%d.%s", now.Unix(), body))
	return app.Delivery{Body: []byte(body), ContentType: "application/json", Signature: fmt.Sprintf("t=%d,v1=%s", now.Unix(), hex.EncodeToString(mac.Sum(nil)))}
}

func event(id, host string) string {
	return fmt.Sprintf(`{"id":%q,"object":"event","type":"invoice.paid","data":{"object":{"id":"in_1","customer":"cus_1","metadata":{"host":%q}}}}`, id, host)
}

func TestAFailedEffectAnswers500AndItsRedeliveryAppliesOnce(t *testing.T) {
	svc, billing, store := newService(t)
	ctx := context.Background()
	billing.fail = 1
	if _, err := svc.ReceivePspx(ctx, signed(event("evt_1", "berth.test"))); !fault.Is(err, fault.KindInternal) || grpcx.StatusOf(err).Code() != codes.Internal {
		t.Fatalf("a failed effect answered %v (%v), want an internal fault (500)", err, grpcx.StatusOf(err))
	}
	list, _ := store.Events(ctx, domain.Filter{Limit: 10})
	if len(list) != 1 || list[0].Outcome != domain.OutcomeFailed || list[0].LastError == "" || list[0].Attempts != 1 {
		t.Fatalf("after the failure: %+v", list)
	}
	for range 3 { // the provider's retries
		if _, err := svc.ReceivePspx(ctx, signed(event("evt_1", "berth.test"))); err != nil {
			t.Fatal(err)
		}
	}
	list, _ = store.Events(ctx, domain.Filter{Limit: 10})
	if billing.applied != 1 || len(list) != 1 || list[0].Outcome != domain.OutcomeApplied || list[0].Attempts != 2 {
		t.Fatalf("billing applied %d times; stored %+v", billing.applied, list)
	}
}

func TestRoute3RefusalsStoreNothingAndCallNoEffect(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    app.Delivery
	}{
		{"an unknown customer", signed(`{"id":"evt_2","object":"event","type":"x","data":{"object":{"id":"in_1","customer":"cus_9"}}}`)},
		{"no customer", signed(`{"id":"evt_2","object":"event","type":"price.created","data":{"object":{"id":"price_1"}}}`)},
		{"a bad signature", app.Delivery{Body: []byte(event("evt_2", "berth.test")), Signature: "t=1,v1=00"}},
		{"too large", app.Delivery{Body: make([]byte, domain.MaxBody+1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, billing, store := newService(t)
			if _, err := svc.ReceivePspx(context.Background(), tc.d); !errors.Is(err, domain.ErrNotAnEvent) {
				t.Fatalf("err = %v, want ErrNotAnEvent", err)
			}
			if list, _ := store.Events(context.Background(), domain.Filter{Limit: 10}); len(list) != 0 || billing.applied != 0 {
				t.Fatalf("stored %d, applied %d", len(list), billing.applied)
			}
		})
	}
	svc, billing, _ := newService(t)
	r, err := svc.ReceivePspx(context.Background(), app.Delivery{Body: []byte(event("evt_3", "elsewhere.example"))})
	if err != nil || !r.WrongHost || r.Host != "elsewhere.example" || billing.applied != 0 {
		t.Fatalf("another deployment's object: %+v, %v, applied %d", r, err, billing.applied)
	}
}

func TestRoute4StoresEachCallAndAnswersBillingsVerdict(t *testing.T) {
	svc, billing, store := newService(t)
	ctx := context.Background()
	conn := uuid.NewString()
	call := app.Delivery{Body: []byte("id=tr_1"), ContentType: "application/x-www-form-urlencoded", PaymentProviderUUID: conn}
	billing.status = "open"
	if r, err := svc.ReceivePspy(ctx, call); err != nil || r.Status != "open" {
		t.Fatalf("an open payment: %+v, %v", r, err)
	}
	billing.status, billing.ignore = "", true
	if r, err := svc.ReceivePspy(ctx, call); err != nil || !r.Ignored {
		t.Fatalf("a payment billing ignores: %+v, %v", r, err)
	}
	for _, d := range []app.Delivery{{Body: []byte("id=tr_1")}, {Body: []byte(""), PaymentProviderUUID: conn}, {Body: []byte("id=tr_1"), PaymentProviderUUID: "not-a-uuid"}} {
		if r, err := svc.ReceivePspy(ctx, d); err != nil || !r.Ignored {
			t.Fatalf("%+v: %+v, %v", d, r, err)
		}
	}
	list, _ := store.Events(ctx, domain.Filter{Limit: 10})
	if len(list) != 2 || billing.applied != 2 || list[0].Outcome != domain.OutcomeIgnored || list[1].Outcome != domain.OutcomeApplied {
		t.Fatalf("stored %+v, applied %d: want the two calls naming a connection and a payment", list, billing.applied)
	}
}

func TestBillingAppliesAProviderCallAsTheProvidersEventOfTheRequestThatBroughtIt(t *testing.T) {
	svc, billing, _ := newService(t)
	ctx := events.WithActor(context.Background(), events.Actor{Kind: events.ActorSystem, ID: "anonymous", RequestID: "req-7", ClientAddress: "192.0.2.5"})
	call := app.Delivery{Body: []byte("id=tr_42"), ContentType: "application/x-www-form-urlencoded", PaymentProviderUUID: uuid.NewString()}
	if _, err := svc.ReceivePspy(ctx, call); err != nil {
		t.Fatal(err)
	}
	want := []events.Actor{{Kind: events.ActorProviderEvent, ID: "tr_42", RequestID: "req-7", ClientAddress: "192.0.2.5"}}
	if !reflect.DeepEqual(billing.actors, want) {
		t.Fatalf("billing was called as %+v, want %+v", billing.actors, want)
	}
}

func TestReplayAppliesARangeOldestFirstAndValidatesItsArguments(t *testing.T) {
	svc, billing, store := newService(t)
	ctx := context.Background()
	billing.fail = 2
	for _, id := range []string{"evt_a", "evt_b"} {
		_, _ = svc.ReceivePspx(ctx, signed(event(id, "berth.test")))
	}
	r, err := svc.ReplayEvents(ctx, "", "", domain.Filter{ConnectionID: "conn-1", Since: now.Add(-time.Hour), Until: now.Add(time.Hour)})
	if err != nil || r.Replayed != 2 || r.Applied != 2 || r.Failed != 0 || billing.applied != 2 {
		t.Fatalf("replay: %+v, %v, applied %d", r, err, billing.applied)
	}
	if failed, _ := store.Events(ctx, domain.Filter{Outcome: domain.OutcomeFailed, Limit: 10}); len(failed) != 0 {
		t.Fatalf("still failed after the replay: %+v", failed)
	}
	if _, err := svc.ReplayEvents(ctx, "", "", domain.Filter{ConnectionID: "conn-1"}); !fault.Is(err, fault.KindInvalid) {
		t.Fatalf("a range without times: %v", err)
	}
	if _, err := svc.ReplayEvents(ctx, "", uuid.NewString(), domain.Filter{}); !errors.Is(err, domain.ErrEventNotFound) {
		t.Fatalf("an unknown id: %v", err)
	}
	for _, f := range []domain.Filter{{Limit: 1001}, {Outcome: "done"}, {Provider: "other"}} {
		if _, err := svc.ListEvents(ctx, "", f); !fault.Is(err, fault.KindInvalid) {
			t.Fatalf("ListEvents(%+v) = %v", f, err)
		}
	}
}

func TestBillingsVerdictDecidesTheStoredOutcomeAndTheAnswerOnBothRoutes(t *testing.T) {
	const reason = "the provider refuses the object for good: 404 resource_missing No such invoice: 'in_1'"
	answers := func(a app.Applied, err error) func() (app.Applied, error) {
		return func() (app.Applied, error) { return a, err }
	}
	tests := []struct {
		name        string
		verdict     func() (app.Applied, error)
		outcome     string
		lastError   string // "" none, "*" any
		answer500   bool
		wantReceipt app.Receipt
	}{
		{"applied", answers(app.Applied{Effect: "subscription.renewed"}, nil), domain.OutcomeApplied, "", false, app.Receipt{}},
		{"names nothing of Berth's", answers(app.Applied{Ignored: true}, nil), domain.OutcomeIgnored, "", false, app.Receipt{Ignored: true}},
		{"refused for good: recorded as rejected with billing's reason, answered 200",
			answers(app.Applied{Rejected: reason}, nil), domain.OutcomeRejected, reason, false, app.Receipt{}},
		{"billing or the provider unavailable: failed, answered 500",
			answers(app.Applied{}, status.Error(codes.Unavailable, "billing unavailable")), domain.OutcomeFailed, "*", true, app.Receipt{}},
		{"billing failing: failed, answered 500",
			answers(app.Applied{}, status.Error(codes.Internal, "Internal Server Error")), domain.OutcomeFailed, "*", true, app.Receipt{}},
		{"a status billing answered is no refusal for good: failed, answered 500",
			answers(app.Applied{}, status.Error(codes.InvalidArgument, "Invalid description")), domain.OutcomeFailed, "*", true, app.Receipt{}},
	}
	routes := map[string]func(*app.Service) (app.Receipt, error){
		"route 3 (pspx)": func(svc *app.Service) (app.Receipt, error) {
			return svc.ReceivePspx(context.Background(), signed(event("evt_verdict", "berth.test")))
		},
		"route 4 (pspy)": func(svc *app.Service) (app.Receipt, error) {
			return svc.ReceivePspy(context.Background(), app.Delivery{Body: []byte("id=tr_1"), ContentType: "application/x-www-form-urlencoded",
				PaymentProviderUUID: "6f1c2a5e-1b7d-4c53-9d2e-8a4b3c2d1e0f"})
		},
	}
	for route, receive := range routes {
		for _, tt := range tests {
			t.Run(route+": "+tt.name, func(t *testing.T) {
				svc, billing, store := newService(t)
				billing.verdict = tt.verdict
				r, err := receive(svc)
				if tt.answer500 {
					if !fault.Is(err, fault.KindInternal) || grpcx.StatusOf(err).Code() != codes.Internal {
						t.Fatalf("answered %+v, %v; want an internal fault (500)", r, err)
					}
				} else if err != nil || r != tt.wantReceipt {
					t.Fatalf("answered %+v, %v; want %+v (200)", r, err, tt.wantReceipt)
				}
				list, _ := store.Events(context.Background(), domain.Filter{Limit: 10})
				if len(list) != 1 || list[0].Outcome != tt.outcome || list[0].Attempts != 1 {
					t.Fatalf("stored %+v; want one call, %s after one attempt", list, tt.outcome)
				}
				if got := list[0].LastError; (tt.lastError == "*" && got == "") || (tt.lastError != "*" && got != tt.lastError) {
					t.Errorf("lastError = %q, want %q", got, tt.lastError)
				}
				if byOutcome, err := svc.ListEvents(context.Background(), "", domain.Filter{Outcome: tt.outcome}); err != nil || len(byOutcome) != 1 {
					t.Errorf("ListEvents by outcome %s: %d, %v", tt.outcome, len(byOutcome), err)
				}
			})
		}
	}
}

func TestARejectedCallIsAskedAgainOnRedeliveryAndReplayAndAppliesOnceBillingCan(t *testing.T) {
	svc, billing, store := newService(t)
	ctx := context.Background()
	rejected := true
	billing.verdict = func() (app.Applied, error) {
		if rejected {
			return app.Applied{Rejected: "the provider refuses the object for good: 403 permission_denied"}, nil
		}
		return app.Applied{Effect: "subscription.renewed"}, nil
	}
	for range 2 { // the first delivery, then one the provider sends again anyway
		if r, err := svc.ReceivePspx(ctx, signed(event("evt_rej", "berth.test"))); err != nil || r != (app.Receipt{}) {
			t.Fatalf("answered %+v, %v; want 200 {received:true}", r, err)
		}
	}
	list, _ := store.Events(ctx, domain.Filter{Limit: 10})
	if billing.asked != 2 || len(list) != 1 || list[0].Outcome != domain.OutcomeRejected || list[0].Attempts != 2 || !list[0].AppliedAt.IsZero() {
		t.Fatalf("billing asked %d times; stored %+v", billing.asked, list)
	}
	// An operator fixed what made the provider refuse it (the connection's key) and replays it.
	rejected = false
	if r, err := svc.ReplayEvents(ctx, "", list[0].ID, domain.Filter{}); err != nil || r.Applied != 1 || r.Failed != 0 {
		t.Fatalf("replay: %+v, %v", r, err)
	}
	if got, _ := store.Event(ctx, list[0].ID); got.Outcome != domain.OutcomeApplied || got.Attempts != 3 || got.LastError != "" {
		t.Fatalf("after the replay: %+v", got)
	}
}

func TestAnAppsOperatorsListAndReplayOnlyTheCallsOfItsOwnConnections(t *testing.T) {
	svc, billing, store := newService(t)
	ctx := context.Background()
	for _, id := range []string{"evt_a", "evt_b"} {
		_, _ = svc.ReceivePspx(ctx, signed(event(id, "berth.test")))
	}
	// A pspy call of a connection of another app.
	elsewhere := uuid.NewString()
	if _, err := svc.ReceivePspy(ctx, app.Delivery{Body: []byte("id=tr_1"), ContentType: "application/x-www-form-urlencoded", PaymentProviderUUID: elsewhere}); err != nil {
		t.Fatal(err)
	}
	all, _ := store.Events(ctx, domain.Filter{Limit: 10})
	var foreign domain.Event
	for _, e := range all {
		if e.ConnectionID == elsewhere {
			foreign = e
		}
	}
	otherApp := uuid.NewString()
	for _, c := range []struct {
		name   string
		appID  string
		filter domain.Filter
		want   []string // provider event ids, newest first
	}{
		{"the admin token's view", "", domain.Filter{}, []string{"tr_1", "evt_b", "evt_a"}},
		{"the app's calls", connApp, domain.Filter{}, []string{"evt_b", "evt_a"}},
		{"the app's calls, at most one", connApp, domain.Filter{Limit: 1}, []string{"evt_b"}},
		{"the app's own connection named", connApp, domain.Filter{ConnectionID: "conn-1"}, []string{"evt_b", "evt_a"}},
		{"another app's connection named", connApp, domain.Filter{ConnectionID: elsewhere}, nil},
		{"an app without connections", otherApp, domain.Filter{}, nil},
	} {
		list, err := svc.ListEvents(ctx, c.appID, c.filter)
		var got []string
		for _, e := range list {
			got = append(got, e.ProviderEventID)
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}

	before := billing.applied
	if _, err := svc.ReplayEvents(ctx, connApp, foreign.ID, domain.Filter{}); !errors.Is(err, domain.ErrEventNotFound) {
		t.Errorf("replaying another app's call: %v, want not found", err)
	}
	window := domain.Filter{ConnectionID: elsewhere, Since: now.Add(-time.Hour), Until: now.Add(time.Hour)}
	if _, err := svc.ReplayEvents(ctx, connApp, "", window); !fault.Is(err, fault.KindNotFound) {
		t.Errorf("replaying another app's connection: %v, want not found", err)
	}
	if billing.applied != before {
		t.Fatalf("a refused replay reached billing (%d → %d)", before, billing.applied)
	}
	own := all[len(all)-1] // evt_a, the oldest
	if r, err := svc.ReplayEvents(ctx, connApp, own.ID, domain.Filter{}); err != nil || r.Replayed != 1 {
		t.Errorf("replaying the app's own call: %+v, %v", r, err)
	}
}
