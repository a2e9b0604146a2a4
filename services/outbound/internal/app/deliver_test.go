package app_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/services/outbound/internal/adapters/httpsend"
	"github.com/berthhq/berth/services/outbound/internal/adapters/memory"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
)

// receiver is an app's webhook endpoint: it verifies every request's signature with the secret the
// create route returned and counts what arrived per webhook-id.
type receiver struct {
	t      *testing.T
	mu     sync.Mutex
	secret string
	got    map[string]int       // webhook-id → times received
	first  map[string]time.Time // webhook-id → first arrival
	bad    int                  // requests whose signature did not verify
}

func newReceiver(t *testing.T) *receiver {
	return &receiver{t: t, got: map[string]int{}, first: map[string]time.Time{}}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	defer r.mu.Unlock()
	if !domain.Verify(r.secret, id, req.Header.Get("webhook-timestamp"), body, req.Header.Get("webhook-signature")) {
		r.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.got[id] == 0 {
		r.first[id] = time.Now()
	}
	r.got[id]++
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// register creates an endpoint for url subscribed to every type and gives its secret to rec.
func register(t *testing.T, svc *app.Service, url string, rec *receiver) domain.Endpoint {
	t.Helper()
	v, err := svc.CreateEndpoint(context.Background(), appID, appID, app.EndpointInput{URL: url, Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	if rec != nil {
		rec.mu.Lock()
		rec.secret = v.Secret
		rec.mu.Unlock()
	}
	return v.Endpoint
}

// publish consumes n user.updated events as the identity consumer would.
func publish(t *testing.T, svc *app.Service, n int) {
	t.Helper()
	for i := range n {
		u := &identityv1.UserChanged{AppId: appID, UserId: fmt.Sprintf("u%d", i), ChangedFields: []string{"name"}}
		if err := svc.Publish(context.Background(), event(t, identityv1.EventUserUpdated, u), u); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAReceiverThatIsDownThenUpGetsEveryEventWithVerifyingSignatures(t *testing.T) {
	// 0.0001 runs the schedule's 5 s, 5 min and 30 min in 0.5, 30 and 180 ms.
	svc, store := newService(t, 0.0001)
	// Reserve a port, then leave it closed: connections are refused until the receiver starts.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	rec := newReceiver(t)
	e := register(t, svc, "http://"+addr+"/hooks", rec)
	run(t, svc)
	const n = 40
	publish(t, svc, n)

	time.Sleep(60 * time.Millisecond) // the first attempts fail against the closed port
	views, _ := store.ListDeliveries(context.Background(), appID, e.ID, 100)
	failedOnce := 0
	for _, v := range views {
		if len(v.Attempts) > 0 && v.Attempts[0].Status == 0 && v.Attempts[0].Error != "" {
			failedOnce++
		}
	}
	if failedOnce == 0 {
		t.Fatal("no attempt failed while the receiver was down: the test proves nothing")
	}

	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the reserved port was taken meanwhile: %v", err)
	}
	srv := &http.Server{Handler: rec}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	testkit.Eventually(t, "every event reaches the receiver once it is up", func() bool { return rec.distinct() == n })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.bad != 0 {
		t.Errorf("%d requests carried a signature that does not verify with the endpoint's secret", rec.bad)
	}
	dups := 0
	for _, c := range rec.got {
		dups += c - 1
	}
	t.Logf("%d events, %d attempts failed while down, %d duplicates", n, failedOnce, dups)
}

func TestADeadEndpointDoesNotDelayAHealthyOne(t *testing.T) {
	svc, _ := newService(t, 1)
	// The dead endpoint accepts connections and never answers: each attempt holds for the full
	// 15-second timeout.
	hang := make(chan struct{})
	dead := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	rec := newReceiver(t)
	healthy := httptest.NewServer(rec)
	t.Cleanup(healthy.Close)
	register(t, svc, dead.URL, nil)
	register(t, svc, healthy.URL, rec)
	stop := run(t, svc)
	t.Cleanup(func() {
		close(hang)
		dead.Close()
		stop()
	})

	const n = 100
	start := time.Now()
	publish(t, svc, n)
	testkit.Eventually(t, "every event reaches the healthy endpoint", func() bool { return rec.distinct() == n })
	took := time.Since(start)
	if took >= domain.AttemptTimeout {
		t.Fatalf("the healthy endpoint got its events after %s: it waited for the dead one", took)
	}
	rec.mu.Lock()
	lat := make([]time.Duration, 0, n)
	for _, at := range rec.first {
		lat = append(lat, at.Sub(start))
	}
	rec.mu.Unlock()
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100-1]
	t.Logf("healthy endpoint beside a dead one: %d events in %s, p99 %s", n, took, p99)
	if p99 > 2*time.Second {
		t.Errorf("p99 %s beside a dead endpoint", p99)
	}
}

func TestRetryAndRotationKeepTheWebhookIDAndSignWithBothSecrets(t *testing.T) {
	svc, store := newService(t, 1)
	var (
		mu   sync.Mutex
		reqs []*http.Request
		body []byte
	)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body, _ = io.ReadAll(r.Body)
		reqs = append(reqs, r)
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	created, err := svc.CreateEndpoint(ctx, appID, appID, app.EndpointInput{URL: srv.URL, Events: []string{"user.updated"}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, svc)
	publish(t, svc, 1)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(reqs) }
	testkit.Eventually(t, "the first delivery", func() bool { return count() == 1 })

	rotated, err := svc.RotateSecret(ctx, appID, appID, created.Endpoint.ID)
	if err != nil || rotated.Secret == created.Secret {
		t.Fatalf("rotate: %v", err)
	}
	views, _ := store.ListDeliveries(ctx, appID, created.Endpoint.ID, 10)
	if _, err := svc.RetryDelivery(ctx, appID, appID, created.Endpoint.ID, views[0].Delivery.ID); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the retried delivery", func() bool { return count() == 2 })
	// The runner records the attempt after the receiver has answered it.
	testkit.Eventually(t, "the retry's attempt is recorded", func() bool {
		after, _ := store.ListDeliveries(ctx, appID, created.Endpoint.ID, 10)
		return len(after[0].Attempts) == 2 && after[0].Delivery.Status == domain.StatusSucceeded
	})
	mu.Lock()
	defer mu.Unlock()
	id := views[0].Delivery.ID
	if reqs[0].Header.Get("webhook-id") != id || reqs[1].Header.Get("webhook-id") != id {
		t.Errorf("webhook-ids %q and %q, want the delivery's %s on both attempts", reqs[0].Header.Get("webhook-id"), reqs[1].Header.Get("webhook-id"), id)
	}
	h := reqs[1].Header
	if n := len(strings.Fields(h.Get("webhook-signature"))); n != 2 {
		t.Errorf("after a rotation the signature header holds %d signatures, want 2", n)
	}
	for _, secret := range []string{created.Secret, rotated.Secret} {
		if !domain.Verify(secret, id, h.Get("webhook-timestamp"), body, h.Get("webhook-signature")) {
			t.Error("during the overlap a receiver holding one of the two secrets cannot verify")
		}
	}
}

func TestAnEndpointFailingForFiveDaysIsDisabledAndRecoveryResendsItsFailedDeliveries(t *testing.T) {
	var (
		mu     sync.Mutex
		offset time.Duration // the test's jump forward in time
		down   = true
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	box, _ := sealbox.New(make([]byte, sealbox.KeySize))
	outbox := &events.MemoryOutbox{}
	store := memory.New(outbox)
	svc, err := app.New(app.Config{Store: store, Box: box, Sender: httpsend.New(true), URLs: domain.URLPolicy{AllowHTTP: true},
		TimeScale: 1e-9, Clock: clock, NewID: uuid.NewString})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	created, err := svc.CreateEndpoint(ctx, appID, appID, app.EndpointInput{URL: srv.URL, Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.Endpoint.ID
	run(t, svc)
	publish(t, svc, 1)
	failed := func() bool {
		vs, _ := store.ListDeliveries(ctx, appID, id, 10)
		return len(vs) == 1 && vs[0].Delivery.Status == domain.StatusFailed
	}
	testkit.Eventually(t, "the delivery fails its whole schedule", failed)
	if e, _ := store.GetEndpoint(ctx, appID, id); e.Disabled || e.FailingSince.IsZero() {
		t.Fatalf("after a day's failures the endpoint is %+v, want failing but enabled", e)
	}

	mu.Lock()
	offset = domain.DisableAfter
	mu.Unlock()
	vs, _ := store.ListDeliveries(ctx, appID, id, 10)
	if _, err := svc.RetryDelivery(ctx, appID, appID, id, vs[0].Delivery.ID); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "five days of failures disable the endpoint", func() bool {
		e, _ := store.GetEndpoint(ctx, appID, id)
		return e.Disabled
	})
	pending, _ := outbox.Pending(ctx, 10)
	if len(pending) != 1 || pending[0].Type != outboundv1.EventEndpointDisabled {
		t.Fatalf("outbox holds %v, want one endpoint.disabled event for the app's operators", pending)
	}
	var disabledEv outboundv1.EndpointDisabled
	if err := pending[0].Decode(&disabledEv); err != nil || disabledEv.GetEndpointId() != id || disabledEv.GetFailingSince() == "" {
		t.Errorf("event payload %v (%v)", &disabledEv, err)
	}

	// Back up and enabled again, the app recovers what failed meanwhile.
	mu.Lock()
	down = false
	mu.Unlock()
	enabled := false
	if _, err := svc.UpdateEndpoint(ctx, appID, appID, id, app.EndpointPatch{Disabled: &enabled}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the retried delivery has failed", failed)
	r, err := svc.RecoverDeliveries(ctx, appID, appID, id, time.Now().Add(-time.Hour).Format(time.RFC3339))
	if err != nil || r.Deliveries != 1 {
		t.Fatalf("recovered %+v, %v", r, err)
	}
	testkit.Eventually(t, "the recovered delivery succeeds", func() bool {
		vs, _ := store.ListDeliveries(ctx, appID, id, 10)
		return vs[0].Delivery.Status == domain.StatusSucceeded
	})
	if e, _ := store.GetEndpoint(ctx, appID, id); !e.FailingSince.IsZero() {
		t.Errorf("a success left the failure streak at %v", e.FailingSince)
	}
	if _, err := svc.RecoverDeliveries(ctx, appID, appID, id, "yesterday"); !fault.Is(err, fault.KindInvalid) {
		t.Errorf("a malformed since: %v", err)
	}
}

func TestStoppingCutsOpenAttemptsShortAndRecordsNoneOfThem(t *testing.T) {
	svc, store := newService(t, 1)
	arrived := make(chan struct{}, 1)
	dead := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		// The server notices a client gone only once the body is read.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	t.Cleanup(dead.Close)
	e := register(t, svc, dead.URL, nil)
	stop := run(t, svc)
	publish(t, svc, 1)
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the attempt never reached the endpoint")
	}
	began := time.Now()
	stop()
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("stopping waited %s for an attempt that hangs for %s", took, domain.AttemptTimeout)
	}
	vs, _ := store.ListDeliveries(context.Background(), appID, e.ID, 10)
	if len(vs) != 1 || vs[0].Delivery.Status != domain.StatusPending || len(vs[0].Attempts) != 0 {
		t.Errorf("after the stop the delivery is %+v with %d attempts, want pending with none recorded", vs[0].Delivery, len(vs[0].Attempts))
	}
}
