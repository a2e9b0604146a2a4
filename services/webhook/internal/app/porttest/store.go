package porttest

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/services/webhook/internal/app"
	"github.com/berthhq/berth/services/webhook/internal/domain"
)

// Factory returns a fresh, empty store.
type Factory func(t *testing.T) app.Store

// Run runs the app.Store conformance suite against stores made by newStore.
func Run(t *testing.T, newStore Factory) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s app.Store)
	}{
		{"RecordedCallsRoundTripEveryField", roundTrip},
		{"ADedupeKeyIsRecordedOnceEvenUnderARace", dedupeUnderRace},
		{"CallsWithoutADedupeKeyAreAllKept", noDedupeKey},
		{"FinishCountsAttemptsAndKeepsTheLatestOutcome", finish},
		{"ARejectedCallKeepsItsReasonUnappliedAndIsListedByOutcome", rejected},
		{"EventsFilterNewestFirst", listFilters},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

// instant is cut to microseconds, the precision Postgres keeps.
var instant = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

var ctx = context.Background()

func call(provider, key string, at time.Time) domain.Event {
	return domain.Event{ID: uuid.NewString(), Provider: provider, ProviderEventID: "evt_" + uuid.NewString()[:8], DedupeKey: key,
		Type: "invoice.paid", ConnectionID: uuid.NewString(), Test: true, Body: []byte(`{"id":"evt_1"}`), ContentType: "application/json",
		Signature: "t=1,v1=ab", Host: "berth.test", Outcome: domain.OutcomeReceived, ReceivedAt: at}
}

func roundTrip(t *testing.T, s app.Store) {
	e := call(domain.Pspx, "evt_round", instant)
	got, isNew, err := s.Record(ctx, e)
	if err != nil || !isNew {
		t.Fatalf("Record = %v, %v", isNew, err)
	}
	if !reflect.DeepEqual(got, e) {
		t.Fatalf("Record answered\n %+v\nwant %+v", got, e)
	}
	if read, err := s.Event(ctx, e.ID); err != nil || !reflect.DeepEqual(read, e) {
		t.Fatalf("Event = %+v, %v", read, err)
	}
	for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
		if _, err := s.Event(ctx, id); !errors.Is(err, domain.ErrEventNotFound) {
			t.Fatalf("Event(%q) = %v", id, err)
		}
	}
}

func dedupeUnderRace(t *testing.T, s app.Store) {
	const n = 8
	var wg sync.WaitGroup
	got := make([]domain.Event, n)
	fresh := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { got[i], fresh[i], errs[i] = s.Record(ctx, call(domain.Pspx, "evt_race", instant)) })
	}
	wg.Wait()
	won := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if fresh[i] {
			won++
		}
		if got[i].ID != got[0].ID {
			t.Fatalf("racing records answered different calls: %s and %s", got[i].ID, got[0].ID)
		}
	}
	if won != 1 {
		t.Fatalf("%d records were new, want 1", won)
	}
	// The same key of the other provider is another call.
	if _, isNew, err := s.Record(ctx, call(domain.Pspy, "evt_race", instant)); err != nil || !isNew {
		t.Fatalf("other provider: %v, %v", isNew, err)
	}
}

func noDedupeKey(t *testing.T, s app.Store) {
	for range 3 {
		if _, isNew, err := s.Record(ctx, call(domain.Pspy, "", instant)); err != nil || !isNew {
			t.Fatalf("Record = %v, %v", isNew, err)
		}
	}
	if got, err := s.Events(ctx, domain.Filter{Provider: domain.Pspy, Limit: 10}); err != nil || len(got) != 3 {
		t.Fatalf("kept %d, %v; want 3", len(got), err)
	}
}

func finish(t *testing.T, s app.Store) {
	e, _, err := s.Record(ctx, call(domain.Pspx, "evt_finish", instant))
	if err != nil {
		t.Fatal(err)
	}
	failed, err := s.Finish(ctx, e.ID, app.Attempt{Outcome: domain.OutcomeFailed, Error: "billing unavailable", At: instant.Add(time.Second)})
	if err != nil || failed.Outcome != domain.OutcomeFailed || failed.Attempts != 1 || failed.LastError != "billing unavailable" || !failed.AppliedAt.IsZero() {
		t.Fatalf("after a failure: %+v, %v", failed, err)
	}
	done, err := s.Finish(ctx, e.ID, app.Attempt{Outcome: domain.OutcomeApplied, Effect: "subscription.renewed", At: instant.Add(time.Minute)})
	if err != nil || done.Outcome != domain.OutcomeApplied || done.Attempts != 2 || done.LastError != "" || done.Effect != "subscription.renewed" ||
		!done.AppliedAt.Equal(instant.Add(time.Minute)) {
		t.Fatalf("after applying: %+v, %v", done, err)
	}
	if read, _ := s.Event(ctx, e.ID); !reflect.DeepEqual(read, done) {
		t.Fatalf("stored %+v, want %+v", read, done)
	}
	again, isNew, err := s.Record(ctx, call(domain.Pspx, "evt_finish", instant.Add(time.Hour)))
	if err != nil || isNew || again.Outcome != domain.OutcomeApplied {
		t.Fatalf("a redelivery after applying: %+v, %v, %v", again, isNew, err)
	}
	if _, err := s.Finish(ctx, uuid.NewString(), app.Attempt{Outcome: domain.OutcomeApplied, At: instant}); !errors.Is(err, domain.ErrEventNotFound) {
		t.Fatalf("Finish of an unknown call: %v", err)
	}
}

func rejected(t *testing.T, s app.Store) {
	e, _, err := s.Record(ctx, call(domain.Pspx, "evt_rejected", instant))
	if err != nil {
		t.Fatal(err)
	}
	const reason = "the provider refuses the object for good: 404 resource_missing"
	got, err := s.Finish(ctx, e.ID, app.Attempt{Outcome: domain.OutcomeRejected, Error: reason, At: instant.Add(time.Second)})
	if err != nil || got.Outcome != domain.OutcomeRejected || got.LastError != reason || got.Attempts != 1 || !got.AppliedAt.IsZero() {
		t.Fatalf("after a rejection: %+v, %v", got, err)
	}
	if list, err := s.Events(ctx, domain.Filter{Outcome: domain.OutcomeRejected, Limit: 10}); err != nil || len(list) != 1 || list[0].ID != e.ID {
		t.Fatalf("listed by outcome: %+v, %v", list, err)
	}
}

func listFilters(t *testing.T, s app.Store) {
	conn := uuid.NewString()
	var ids []string
	for i := range 4 {
		e := call(domain.Pspx, "evt_list_"+string(rune('a'+i)), instant.Add(time.Duration(i)*time.Minute))
		e.ConnectionID = conn
		if _, _, err := s.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	if _, err := s.Finish(ctx, ids[1], app.Attempt{Outcome: domain.OutcomeFailed, Error: "x", At: instant}); err != nil {
		t.Fatal(err)
	}
	other := call(domain.Pspy, "", instant.Add(10*time.Minute))
	if _, _, err := s.Record(ctx, other); err != nil {
		t.Fatal(err)
	}
	list := func(f domain.Filter) []string {
		if f.Limit == 0 {
			f.Limit = 100
		}
		got, err := s.Events(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, e := range got {
			out = append(out, e.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    domain.Filter
		want []string
	}{
		{"all, newest first", domain.Filter{}, []string{other.ID, ids[3], ids[2], ids[1], ids[0]}},
		{"by connection", domain.Filter{ConnectionID: conn}, []string{ids[3], ids[2], ids[1], ids[0]}},
		{"by outcome", domain.Filter{Outcome: domain.OutcomeFailed}, []string{ids[1]}},
		{"by provider", domain.Filter{Provider: domain.Pspy}, []string{other.ID}},
		{"since inclusive, until exclusive", domain.Filter{Since: instant.Add(time.Minute), Until: instant.Add(3 * time.Minute)}, []string{ids[2], ids[1]}},
		{"limited", domain.Filter{Limit: 2}, []string{other.ID, ids[3]}},
	} {
		if got := list(tc.f); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
