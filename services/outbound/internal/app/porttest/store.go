package porttest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/conformance"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"

	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
)

// Factory returns a fresh, empty store and the outbox its writes feed.
type Factory func(t *testing.T) (app.Store, events.OutboxSource)

// Exempt declares a case the adapter under test cannot honour, and why.
type Exempt = conformance.Exempt

// Run runs the app.Store conformance suite against stores made by newStore, skipping the cases
// exempt names.
func Run(t *testing.T, newStore Factory, exempt ...Exempt) {
	tests := []struct {
		name string
		run  func(t *testing.T, store app.Store, outbox events.OutboxSource)
	}{
		{"UpdateStoresItsEventsWithTheEndpoint", updateStoresEvents},
		{"CreateThenGetReturnsEveryField", createThenGet},
		{"EndpointsAreScopedToTheirApp", scopedToApp},
		{"ListIsOldestFirst", listOldestFirst},
		{"UpdateStoresTheChangeAndAFailedOneNothing", update},
		{"DeleteRemovesTheEndpointWithItsDeliveries", deleteCascades},
		{"ClaimLeasesDueDeliveriesUntilTheLeaseEnds", claimLeases},
		{"ClaimHonoursItsLimitsAndSkipsBusyEndpoints", claimLimits},
		{"ConcurrentClaimsTakeDisjointDeliveries", concurrentClaims},
		{"AnAddedLeasedDeliveryIsClaimedOnlyOnceItsLeaseEnds", addLeased},
		{"RenewMovesOnlyTheLeasesStillHeld", renewLeases},
		{"RecordAttemptStoresStateAndAttempts", recordAttempt},
		{"RetryMakesAFinishedDeliveryDueAgain", retry},
		{"RecoverMakesTheFailedDeliveriesSinceATimeDueAgain", recoverSince},
	}
	s := conformance.New(t, exempt)
	for _, tc := range tests {
		s.Run(tc.name, func(t *testing.T) {
			store, outbox := newStore(t)
			tc.run(t, store, outbox)
		})
	}
}

func updateStoresEvents(t *testing.T, store app.Store, outbox events.OutboxSource) {
	ctx := context.Background()
	e := mustCreate(t, store, newEndpoint(uuid.NewString(), instant))
	ev, err := events.New(app.Source, outboundv1.EventEndpointDisabled, e.AppID, &outboundv1.EndpointDisabled{AppId: e.AppID, EndpointId: e.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.UpdateEndpoint(ctx, e.AppID, e.ID, func(x *domain.Endpoint) ([]events.Event, error) {
		x.Disabled = true
		return []events.Event{ev}, nil
	}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	lost, _ := events.New(app.Source, outboundv1.EventEndpointDisabled, e.AppID, &outboundv1.EndpointDisabled{AppId: e.AppID})
	if _, err := store.UpdateEndpoint(ctx, e.AppID, e.ID, func(*domain.Endpoint) ([]events.Event, error) {
		return []events.Event{lost}, boom
	}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	pending, err := outbox.Pending(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].ID != ev.ID {
		t.Errorf("outbox holds %v, want exactly the committed update's event", pending)
	}
}

// instant is cut to microseconds, the precision Postgres keeps, so read-backs compare equal.
var instant = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

func newEndpoint(appID string, at time.Time) domain.Endpoint {
	return domain.Endpoint{
		ID: uuid.NewString(), AppID: appID, URL: "https://example.com/hooks", Events: []string{"user.created", "user.updated"},
		Description: "the app's receiver", Secret: []byte("sealed-secret"), Previous: []byte("sealed-previous"),
		PreviousUntil: at.Add(time.Hour), FailingSince: at.Add(-time.Minute), CreatedAt: at, UpdatedAt: at,
	}
}

func mustCreate(t *testing.T, store app.Store, e domain.Endpoint) domain.Endpoint {
	t.Helper()
	if err := store.CreateEndpoint(context.Background(), e); err != nil {
		t.Fatalf("CreateEndpoint: %v", err)
	}
	return e
}

func newDelivery(e domain.Endpoint, due time.Time) domain.Delivery {
	return domain.Delivery{ID: uuid.NewString(), AppID: e.AppID, EndpointID: e.ID, Type: "user.created",
		Body: []byte(`{"type":"user.created"}`), Status: domain.StatusPending, NextAttemptAt: due, CreatedAt: due}
}

func mustAdd(t *testing.T, store app.Store, ds ...domain.Delivery) {
	t.Helper()
	if err := store.AddDeliveries(context.Background(), ds...); err != nil {
		t.Fatalf("AddDeliveries: %v", err)
	}
}

func claim(t *testing.T, store app.Store, c app.Claim) []string {
	t.Helper()
	ds, err := store.ClaimDue(context.Background(), c)
	if err != nil {
		t.Fatalf("ClaimDue: %v", err)
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return ids
}

func createThenGet(t *testing.T, store app.Store, _ events.OutboxSource) {
	e := mustCreate(t, store, newEndpoint(uuid.NewString(), instant))
	got, err := store.GetEndpoint(context.Background(), e.AppID, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, e) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, e)
	}
}

func scopedToApp(t *testing.T, store app.Store, _ events.OutboxSource) {
	ctx := context.Background()
	e := mustCreate(t, store, newEndpoint(uuid.NewString(), instant))
	other := uuid.NewString()
	if _, err := store.GetEndpoint(ctx, other, e.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another app's read: %v, want ErrNotFound", err)
	}
	if _, err := store.UpdateEndpoint(ctx, other, e.ID, func(*domain.Endpoint) ([]events.Event, error) { return nil, nil }); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another app's update: %v, want ErrNotFound", err)
	}
	if err := store.DeleteEndpoint(ctx, other, e.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another app's delete: %v, want ErrNotFound", err)
	}
	if list, _ := store.ListEndpoints(ctx, other); len(list) != 0 {
		t.Errorf("another app lists %d endpoints", len(list))
	}
	d := newDelivery(e, instant)
	mustAdd(t, store, d)
	if _, err := store.RetryDelivery(ctx, other, e.ID, d.ID, instant); !errors.Is(err, domain.ErrDeliveryNotFound) {
		t.Errorf("another app's retry: %v, want ErrDeliveryNotFound", err)
	}
	if list, _ := store.ListDeliveries(ctx, other, e.ID, 10); len(list) != 0 {
		t.Errorf("another app lists %d deliveries", len(list))
	}
}

func listOldestFirst(t *testing.T, store app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	second := mustCreate(t, store, newEndpoint(appID, instant.Add(time.Second)))
	first := mustCreate(t, store, newEndpoint(appID, instant))
	list, err := store.ListEndpoints(context.Background(), appID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != first.ID || list[1].ID != second.ID {
		t.Errorf("listed %v, want the older %s first", list, first.ID)
	}
}

func update(t *testing.T, store app.Store, _ events.OutboxSource) {
	ctx := context.Background()
	e := mustCreate(t, store, newEndpoint(uuid.NewString(), instant))
	got, err := store.UpdateEndpoint(ctx, e.AppID, e.ID, func(x *domain.Endpoint) ([]events.Event, error) {
		x.URL, x.Events, x.Disabled, x.Secret, x.Previous = "https://example.org/new", []string{"*"}, true, []byte("s2"), nil
		x.PreviousUntil, x.UpdatedAt = time.Time{}, instant.Add(time.Minute)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read, _ := store.GetEndpoint(ctx, e.AppID, e.ID)
	if !reflect.DeepEqual(read, got) || read.URL != "https://example.org/new" || !read.Disabled || string(read.Secret) != "s2" || read.Previous != nil {
		t.Errorf("after update read %+v, update returned %+v", read, got)
	}
	boom := errors.New("boom")
	if _, err := store.UpdateEndpoint(ctx, e.AppID, e.ID, func(x *domain.Endpoint) ([]events.Event, error) { x.URL = "https://lost"; return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed update: %v", err)
	}
	if again, _ := store.GetEndpoint(ctx, e.AppID, e.ID); again.URL != read.URL {
		t.Errorf("a failed update stored its URL %q", again.URL)
	}
}

func deleteCascades(t *testing.T, store app.Store, _ events.OutboxSource) {
	ctx := context.Background()
	e := mustCreate(t, store, newEndpoint(uuid.NewString(), instant))
	mustAdd(t, store, newDelivery(e, instant))
	if err := store.DeleteEndpoint(ctx, e.AppID, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := store.GetEndpoint(ctx, e.AppID, e.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("deleted endpoint reads: %v", err)
	}
	if ids := claim(t, store, app.Claim{Now: instant, Lease: time.Minute, Limit: 10, PerEndpoint: 10}); len(ids) != 0 {
		t.Errorf("a deleted endpoint's deliveries are still claimed: %v", ids)
	}
	if err := store.DeleteEndpoint(ctx, e.AppID, e.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
}

func claimLeases(t *testing.T, store app.Store, _ events.OutboxSource) {
	e := mustCreate(t, store, newEndpoint(uuid.NewString(), instant))
	due, later := newDelivery(e, instant), newDelivery(e, instant.Add(time.Hour))
	mustAdd(t, store, due, later)
	c := app.Claim{Now: instant, Lease: time.Minute, Limit: 10, PerEndpoint: 10}
	if ids := claim(t, store, c); !slices.Equal(ids, []string{due.ID}) {
		t.Fatalf("first claim %v, want only the due %s", ids, due.ID)
	}
	c.Now = instant.Add(30 * time.Second)
	if ids := claim(t, store, c); len(ids) != 0 {
		t.Errorf("a leased delivery was claimed again within its lease: %v", ids)
	}
	c.Now = instant.Add(61 * time.Second)
	if ids := claim(t, store, c); !slices.Equal(ids, []string{due.ID}) {
		t.Errorf("after the lease ended the claim got %v, want %s back", ids, due.ID)
	}
}

func claimLimits(t *testing.T, store app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	a, b, busy := mustCreate(t, store, newEndpoint(appID, instant)), mustCreate(t, store, newEndpoint(appID, instant)), mustCreate(t, store, newEndpoint(appID, instant))
	var aIDs []string
	for i := range 3 {
		d := newDelivery(a, instant.Add(time.Duration(i)*time.Millisecond))
		aIDs = append(aIDs, d.ID)
		mustAdd(t, store, d)
	}
	bd := newDelivery(b, instant.Add(10*time.Millisecond))
	mustAdd(t, store, bd, newDelivery(busy, instant))
	ids := claim(t, store, app.Claim{Now: instant.Add(time.Second), Lease: time.Minute, Limit: 10, PerEndpoint: 2, Skip: []string{busy.ID}})
	if want := []string{aIDs[0], aIDs[1], bd.ID}; !slices.Equal(ids, want) {
		t.Errorf("claimed %v, want two of a's (oldest first), b's and none of the busy endpoint's: %v", ids, want)
	}
	ids = claim(t, store, app.Claim{Now: instant.Add(time.Second), Lease: time.Minute, Limit: 1, PerEndpoint: 10})
	if len(ids) != 1 {
		t.Errorf("a claim of limit 1 got %v", ids)
	}
}

func concurrentClaims(t *testing.T, store app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	var all []domain.Delivery
	for range 4 {
		e := mustCreate(t, store, newEndpoint(appID, instant))
		for i := range 10 {
			all = append(all, newDelivery(e, instant.Add(time.Duration(i)*time.Millisecond)))
		}
	}
	mustAdd(t, store, all...)
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for {
				ids := claim(t, store, app.Claim{Now: instant.Add(time.Second), Lease: time.Hour, Limit: 3, PerEndpoint: 2})
				if len(ids) == 0 {
					return
				}
				mu.Lock()
				for _, id := range ids {
					seen[id]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != len(all) {
		t.Errorf("claimed %d distinct deliveries, want all %d", len(seen), len(all))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("delivery %s claimed %d times within its lease", id, n)
		}
	}
}

func addLeased(t *testing.T, store app.Store, _ events.OutboxSource) {
	e := mustCreate(t, store, newEndpoint(uuid.NewString(), instant))
	held, free := newDelivery(e, instant), newDelivery(e, instant)
	held.LeaseUntil = instant.Add(time.Minute)
	mustAdd(t, store, held, free)
	c := app.Claim{Now: instant, Lease: time.Hour, Limit: 10, PerEndpoint: 10}
	if ids := claim(t, store, c); !slices.Equal(ids, []string{free.ID}) {
		t.Errorf("claim got %v, want only the delivery added without a lease (%s)", ids, free.ID)
	}
	c.Now = instant.Add(time.Minute)
	ds, err := store.ClaimDue(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].ID != held.ID || !ds[0].LeaseUntil.Equal(instant.Add(time.Minute+time.Hour)) {
		t.Errorf("once its lease ended the claim got %+v, want %s leased until %s", ds, held.ID, instant.Add(time.Minute+time.Hour))
	}
}

func renewLeases(t *testing.T, store app.Store, _ events.OutboxSource) {
	ctx := context.Background()
	e := mustCreate(t, store, newEndpoint(uuid.NewString(), instant))
	mine, taken, recorded, unleased := newDelivery(e, instant), newDelivery(e, instant), newDelivery(e, instant), newDelivery(e, instant)
	mine.LeaseUntil, taken.LeaseUntil, recorded.LeaseUntil = instant.Add(time.Minute), instant.Add(time.Second), instant.Add(time.Minute)
	mustAdd(t, store, mine, taken, recorded, unleased)
	// unleased goes to another claimer at once, and taken once its lease has run out.
	if ids := claim(t, store, app.Claim{Now: instant.Add(time.Second), Lease: time.Hour, Limit: 10, PerEndpoint: 10}); len(ids) != 2 {
		t.Fatalf("another claimer got %v, want the unleased delivery and the one whose lease ran out", ids)
	}
	done := recorded
	done.Status, done.Attempts = domain.StatusSucceeded, 1
	if err := store.RecordAttempts(ctx, app.Recorded{Delivery: done, Attempt: domain.Attempt{At: instant, Status: 204}}); err != nil {
		t.Fatal(err)
	}
	until := instant.Add(10 * time.Minute)
	got, err := store.RenewLeases(ctx, []domain.Delivery{mine, taken, recorded, unleased}, until)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != mine.ID || !got[0].LeaseUntil.Equal(until) {
		t.Fatalf("renewed %+v, want only %s (still held), leased until %s", got, mine.ID, until)
	}
	if ids := claim(t, store, app.Claim{Now: instant.Add(5 * time.Minute), Lease: time.Hour, Limit: 10, PerEndpoint: 10}); len(ids) != 0 {
		t.Errorf("a claim within the renewed lease got %v", ids)
	}
	// Renewing to the zero time gives the delivery back: the next claim takes it.
	if got, err := store.RenewLeases(ctx, got, time.Time{}); err != nil || len(got) != 1 || !got[0].LeaseUntil.IsZero() {
		t.Fatalf("giving the lease back: %+v, %v", got, err)
	}
	if ids := claim(t, store, app.Claim{Now: instant.Add(5 * time.Minute), Lease: time.Hour, Limit: 10, PerEndpoint: 10}); !slices.Equal(ids, []string{mine.ID}) {
		t.Errorf("after the lease was given back the claim got %v, want %s", ids, mine.ID)
	}
	if got, err := store.RenewLeases(ctx, []domain.Delivery{mine}, until); err != nil || len(got) != 0 {
		t.Errorf("renewing a lease given back and claimed by another: %+v, %v, want none", got, err)
	}
}

func recordAttempt(t *testing.T, store app.Store, _ events.OutboxSource) {
	ctx := context.Background()
	e := mustCreate(t, store, newEndpoint(uuid.NewString(), instant))
	d := newDelivery(e, instant)
	mustAdd(t, store, d)
	claim(t, store, app.Claim{Now: instant, Lease: time.Hour, Limit: 1, PerEndpoint: 1})
	failed := domain.Attempt{At: instant, Status: 503, Response: "busy", Duration: 12 * time.Millisecond}
	d.Attempts, d.NextAttemptAt = 1, instant.Add(5*time.Second)
	if err := store.RecordAttempts(ctx, app.Recorded{Delivery: d, Attempt: failed}); err != nil {
		t.Fatal(err)
	}
	// Recording ended the lease: once due again it is claimed again.
	if ids := claim(t, store, app.Claim{Now: instant.Add(5 * time.Second), Lease: time.Hour, Limit: 1, PerEndpoint: 1}); !slices.Equal(ids, []string{d.ID}) {
		t.Errorf("after a failed attempt the claim got %v, want the delivery again", ids)
	}
	ok := domain.Attempt{At: instant.Add(5 * time.Second), Status: 204, Error: "", Duration: time.Millisecond}
	d.Attempts, d.Status = 2, domain.StatusSucceeded
	if err := store.RecordAttempts(ctx, app.Recorded{Delivery: d, Attempt: ok}); err != nil {
		t.Fatal(err)
	}
	list, err := store.ListDeliveries(ctx, e.AppID, e.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("listed %d deliveries", len(list))
	}
	got := list[0]
	if got.Delivery.Status != domain.StatusSucceeded || got.Delivery.Attempts != 2 || string(got.Delivery.Body) != string(d.Body) {
		t.Errorf("delivery read back %+v", got.Delivery)
	}
	if !reflect.DeepEqual(got.Attempts, []domain.Attempt{failed, ok}) {
		t.Errorf("attempts %+v, want %+v", got.Attempts, []domain.Attempt{failed, ok})
	}
	if ids := claim(t, store, app.Claim{Now: instant.Add(time.Hour), Lease: time.Hour, Limit: 1, PerEndpoint: 1}); len(ids) != 0 {
		t.Errorf("a succeeded delivery was claimed: %v", ids)
	}
	// A delivery deleted with its endpoint records nothing and fails nothing.
	if err := store.DeleteEndpoint(ctx, e.AppID, e.ID); err != nil {
		t.Fatal(err)
	}
	if err := store.RecordAttempts(ctx, app.Recorded{Delivery: d, Attempt: ok}); err != nil {
		t.Errorf("recording for a deleted delivery: %v", err)
	}
}

func retry(t *testing.T, store app.Store, _ events.OutboxSource) {
	ctx := context.Background()
	e := mustCreate(t, store, newEndpoint(uuid.NewString(), instant))
	d := newDelivery(e, instant)
	mustAdd(t, store, d)
	d.Status, d.Attempts = domain.StatusFailed, len(domain.Schedule)
	if err := store.RecordAttempts(ctx, app.Recorded{Delivery: d, Attempt: domain.Attempt{At: instant, Error: "refused"}}); err != nil {
		t.Fatal(err)
	}
	later := instant.Add(time.Hour)
	v, err := store.RetryDelivery(ctx, e.AppID, e.ID, d.ID, later)
	if err != nil {
		t.Fatal(err)
	}
	if v.Delivery.Status != domain.StatusPending || !v.Delivery.NextAttemptAt.Equal(later) || len(v.Attempts) != 1 {
		t.Errorf("retried delivery %+v with %d attempts", v.Delivery, len(v.Attempts))
	}
	if ids := claim(t, store, app.Claim{Now: later, Lease: time.Hour, Limit: 1, PerEndpoint: 1}); !slices.Equal(ids, []string{d.ID}) {
		t.Errorf("a retried delivery is not claimed: %v", ids)
	}
	if _, err := store.RetryDelivery(ctx, e.AppID, uuid.NewString(), d.ID, later); !errors.Is(err, domain.ErrDeliveryNotFound) {
		t.Errorf("retry under another endpoint: %v, want ErrDeliveryNotFound", err)
	}
}

func recoverSince(t *testing.T, store app.Store, _ events.OutboxSource) {
	ctx := context.Background()
	e := mustCreate(t, store, newEndpoint(uuid.NewString(), instant))
	old, recent, succeeded := newDelivery(e, instant), newDelivery(e, instant.Add(time.Hour)), newDelivery(e, instant.Add(time.Hour))
	mustAdd(t, store, old, recent, succeeded)
	for _, d := range []domain.Delivery{old, recent} {
		d.Status, d.Attempts = domain.StatusFailed, len(domain.Schedule)
		if err := store.RecordAttempts(ctx, app.Recorded{Delivery: d, Attempt: domain.Attempt{At: instant, Error: "refused"}}); err != nil {
			t.Fatal(err)
		}
	}
	succeeded.Status, succeeded.Attempts = domain.StatusSucceeded, 1
	if err := store.RecordAttempts(ctx, app.Recorded{Delivery: succeeded, Attempt: domain.Attempt{At: instant, Status: 200}}); err != nil {
		t.Fatal(err)
	}
	now := instant.Add(2 * time.Hour)
	n, err := store.RecoverDeliveries(ctx, e.AppID, e.ID, instant.Add(30*time.Minute), now)
	if err != nil || n != 1 {
		t.Fatalf("recovered %d (%v), want only the failed delivery since the time", n, err)
	}
	if ids := claim(t, store, app.Claim{Now: now, Lease: time.Hour, Limit: 10, PerEndpoint: 10}); !slices.Equal(ids, []string{recent.ID}) {
		t.Errorf("claimed %v after the recovery, want %s", ids, recent.ID)
	}
	list, _ := store.ListDeliveries(ctx, e.AppID, e.ID, 10)
	for _, v := range list {
		if v.Delivery.ID == recent.ID && (v.Delivery.Attempts != 0 || v.Delivery.Status != domain.StatusPending) {
			t.Errorf("recovered delivery %+v, want pending with its attempts counted from zero", v.Delivery)
		}
	}
	if n, _ := store.RecoverDeliveries(ctx, uuid.NewString(), e.ID, instant, now); n != 0 {
		t.Errorf("another app recovered %d deliveries", n)
	}
}
