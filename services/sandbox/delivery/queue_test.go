package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/services/sandbox/delivery"
)

// fast makes a provider minute last 2 ms of real time.
const fast = 2.0 / 60_000

// receiver is a webhook endpoint that records what it gets and answers what the test says.
type receiver struct {
	t      *testing.T
	URL    string
	mu     sync.Mutex
	got    []received
	answer func(n int, r *http.Request) int // n counts requests from 1
}

type received struct {
	body   string
	header http.Header
	at     time.Time
}

func newReceiver(t *testing.T, answer func(n int, r *http.Request) int) *receiver {
	t.Helper()
	rc := &receiver{t: t, answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{body: string(b), header: r.Header.Clone(), at: time.Now()})
		n := len(rc.got)
		rc.mu.Unlock()
		code := http.StatusOK
		if rc.answer != nil {
			r.Body = io.NopCloser(bytes.NewReader(b))
			code = rc.answer(n, r)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

func (rc *receiver) received() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

func newQueue(t *testing.T, scale float64) *delivery.Queue {
	t.Helper()
	q := delivery.New(delivery.Config{TimeScale: scale})
	t.Cleanup(q.Close)
	return q
}

// job is a pspy-style notification of payment id for url, in lane "l".
func job(p delivery.Provider, url, id string) delivery.Job {
	return delivery.Job{
		Provider: p, Mode: "test", PaymentID: id, Type: "notification", URL: url, Body: []byte("id=" + id), Lane: "l",
		Header: func(time.Time) http.Header {
			return http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
		},
	}
}

func waitIdle(t *testing.T, q *delivery.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := q.WaitIdle(ctx); err != nil {
		t.Fatalf("waiting for the deliveries: %v\n%+v", err, q.Deliveries())
	}
}

func only(t *testing.T, q *delivery.Queue) delivery.Delivery {
	t.Helper()
	ds := q.Deliveries()
	if len(ds) != 1 {
		t.Fatalf("%d deliveries, want 1: %+v", len(ds), ds)
	}
	return ds[0]
}

// outcomes lists an attempt history as "outcome/status" strings.
func outcomes(d delivery.Delivery) []string {
	var out []string
	for _, a := range d.Attempts {
		out = append(out, fmt.Sprintf("%s/%d", a.Outcome, a.Status))
	}
	return out
}

func TestTheRetrySchedulesAreTheDocumentedOnes(t *testing.T) {
	m := time.Minute
	pspx := delivery.Schedule{m, 2 * m, 4 * m, 8 * m, 16 * m, 32 * m, 64 * m, 128 * m, 256 * m, 512 * m, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour}
	if !slices.Equal(delivery.PspxSchedule, pspx) || delivery.PspxSchedule.Total() != 65*time.Hour+3*m {
		t.Fatalf("pspx schedule %v (total %v)", delivery.PspxSchedule, delivery.PspxSchedule.Total())
	}
	if n := len(delivery.PspySchedule) + 1; n != 10 || delivery.PspySchedule.Total() != 25*time.Hour+51*m {
		t.Fatalf("pspy schedule %v: %d attempts over %v", delivery.PspySchedule, n, delivery.PspySchedule.Total())
	}
}

func TestAFailingDeliveryIsRetriedOnTheScaledScheduleUntilAnswered2xx(t *testing.T) {
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		return []int{500, 503, 404, 200}[min(n, 4)-1]
	})
	q := newQueue(t, fast)
	q.Enqueue(job(delivery.Pspy, rc.URL, "tr_1"))
	waitIdle(t, q)
	d := only(t, q)
	if d.Status != delivery.Delivered || !slices.Equal(outcomes(d), []string{"failed/500", "failed/503", "failed/404", "delivered/200"}) {
		t.Fatalf("delivery %+v", d)
	}
	for i, a := range d.Attempts[1:] {
		want := time.Duration(float64(delivery.PspySchedule[i]) * fast)
		if gap := a.At.Sub(d.Attempts[i].At); gap < want {
			t.Fatalf("attempt %d came %v after the one before, before the scaled wait %v", a.N, gap, want)
		}
	}
	if got := rc.received(); len(got) != 4 || got[0].body != "id=tr_1" || got[0].header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Fatalf("received %+v", got)
	}
}

func TestADeliveryNeverAnswered2xxFailsForGoodWhenItsScheduleRunsOut(t *testing.T) {
	for _, p := range []delivery.Provider{delivery.Pspx, delivery.Pspy} {
		t.Run(string(p), func(t *testing.T) {
			schedule := map[delivery.Provider]delivery.Schedule{delivery.Pspx: delivery.PspxSchedule, delivery.Pspy: delivery.PspySchedule}[p]
			rc := newReceiver(t, func(int, *http.Request) int { return http.StatusInternalServerError })
			// The whole schedule in about 300 ms.
			q := newQueue(t, float64(300*time.Millisecond)/float64(schedule.Total()))
			q.Enqueue(job(p, rc.URL, "tr_1"))
			waitIdle(t, q)
			d := only(t, q)
			if d.Status != delivery.Failed || len(d.Attempts) != len(schedule)+1 || len(rc.received()) != len(schedule)+1 || d.NextAttemptAt != nil {
				t.Fatalf("after the schedule: %s, %d attempts, %d received", d.Status, len(d.Attempts), len(rc.received()))
			}
		})
	}
}

func TestAConnectionErrorIsAFailedAttemptWithoutStatus(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	q := newQueue(t, 1)
	q.Enqueue(job(delivery.Pspy, url, "tr_1"))
	deadline := time.Now().Add(10 * time.Second)
	for len(only(t, q).Attempts) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	d := only(t, q)
	if d.Status != delivery.Pending || len(d.Attempts) != 1 || d.Attempts[0].Outcome != "failed" || d.Attempts[0].Status != 0 || d.Attempts[0].Error == "" ||
		d.NextAttemptAt == nil || d.NextAttemptAt.Before(d.Attempts[0].At.Add(50*time.Second)) {
		t.Fatalf("after a refused connection: %+v", d)
	}
}

func TestEachFaultChangesWhatTheReceiverSees(t *testing.T) {
	slowFirst := func(n int, r *http.Request) int {
		if n == 1 {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}
		return http.StatusOK
	}
	cases := []struct {
		name     string
		faults   delivery.Faults
		answer   func(int, *http.Request) int
		outcomes []string
		received int
		check    func(t *testing.T, enqueued time.Time, d delivery.Delivery, got []received)
	}{
		{name: "duplicate sends each attempt that many extra times", faults: delivery.Faults{Duplicate: 2},
			outcomes: []string{"delivered/200"}, received: 3},
		{name: "delay holds each attempt", faults: delivery.Faults{DelayMs: 80},
			outcomes: []string{"delivered/200"}, received: 1,
			check: func(t *testing.T, enqueued time.Time, _ delivery.Delivery, got []received) {
				if waited := got[0].at.Sub(enqueued); waited < 80*time.Millisecond {
					t.Fatalf("sent %v after it was enqueued, before the delay", waited)
				}
			}},
		{name: "drop loses the next attempts, which are retried", faults: delivery.Faults{Drop: 2},
			outcomes: []string{"dropped/0", "dropped/0", "delivered/200"}, received: 1},
		{name: "failFirst fails each delivery's first attempts whatever the answer", faults: delivery.Faults{FailFirst: 2},
			outcomes: []string{"failed/500", "failed/500", "delivered/200"}, received: 3},
		{name: "timeout gives up on a slow answer", faults: delivery.Faults{TimeoutMs: 50}, answer: slowFirst,
			outcomes: []string{"timeout/0", "delivered/200"}, received: 2},
		{name: "faults of the other provider do not apply", faults: delivery.Faults{Provider: delivery.Pspx, FailFirst: 3, Drop: 3},
			outcomes: []string{"delivered/200"}, received: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := newReceiver(t, tc.answer)
			q := newQueue(t, fast)
			if err := q.SetFaults(tc.faults); err != nil {
				t.Fatal(err)
			}
			enqueued := time.Now()
			q.Enqueue(job(delivery.Pspy, rc.URL, "tr_1"))
			waitIdle(t, q)
			d := only(t, q)
			got := rc.received()
			if !slices.Equal(outcomes(d), tc.outcomes) || len(got) != tc.received {
				t.Fatalf("attempts %v and %d received, want %v and %d", outcomes(d), len(got), tc.outcomes, tc.received)
			}
			if tc.check != nil {
				tc.check(t, enqueued, d, got)
			}
		})
	}
}

func TestDropCountsDownAsAttemptsAreLost(t *testing.T) {
	rc := newReceiver(t, nil)
	q := newQueue(t, fast)
	if err := q.SetFaults(delivery.Faults{Drop: 1}); err != nil {
		t.Fatal(err)
	}
	q.Enqueue(job(delivery.Pspy, rc.URL, "tr_1"), job(delivery.Pspy, rc.URL, "tr_2"))
	waitIdle(t, q)
	if f := q.Faults(); f.Drop != 0 || f.TimeoutMs != 10000 {
		t.Fatalf("faults after the drop: %+v", f)
	}
	dropped := 0
	for _, d := range q.Deliveries() {
		if d.Attempts[0].Outcome == "dropped" {
			dropped++
		}
	}
	if dropped != 1 || len(rc.received()) != 2 {
		t.Fatalf("%d dropped, %d received", dropped, len(rc.received()))
	}
}

func TestALanesDeliveriesGoOutInOrderUnlessReordered(t *testing.T) {
	for _, reorder := range []bool{false, true} {
		t.Run(fmt.Sprintf("reorder=%v", reorder), func(t *testing.T) {
			rc := newReceiver(t, nil)
			q := newQueue(t, fast)
			if err := q.SetFaults(delivery.Faults{Reorder: reorder}); err != nil {
				t.Fatal(err)
			}
			var jobs []delivery.Job
			var want []string
			for i := range 20 {
				id := fmt.Sprintf("tr_%02d", i)
				jobs = append(jobs, job(delivery.Pspy, rc.URL, id))
				want = append(want, "id="+id)
			}
			q.Enqueue(jobs...)
			waitIdle(t, q)
			var order []string
			for _, r := range rc.received() {
				order = append(order, r.body)
			}
			if inOrder := slices.Equal(order, want); inOrder == reorder {
				t.Fatalf("received %v", order)
			}
			slices.Sort(order)
			if !slices.Equal(order, want) {
				t.Fatalf("not each delivery once: %v", order)
			}
		})
	}
}

func TestWaitIdleCountsScheduledRetriesAsPendingAndAwaitGivesUpOnLateRetries(t *testing.T) {
	failing := true
	var mu sync.Mutex
	rc := newReceiver(t, func(int, *http.Request) int {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return 500
		}
		return 200
	})
	q := newQueue(t, 1) // the first retry comes a real minute later
	ids := q.Enqueue(job(delivery.Pspy, rc.URL, "tr_1"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if q.Await(ctx, ids...) || time.Since(start) > 4*time.Second {
		t.Fatalf("Await answered delivered, or waited %v for a retry due after its deadline", time.Since(start))
	}
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if err := q.WaitIdle(short); err == nil || q.Delivered(ids...) {
		t.Fatalf("idle with a retry scheduled: %v", err)
	}

	q2 := newQueue(t, fast)
	mu.Lock()
	failing = false
	mu.Unlock()
	ids = q2.Enqueue(job(delivery.Pspy, rc.URL, "tr_2"))
	if !q2.Await(ctx, ids...) || !q2.Delivered(ids...) {
		t.Fatalf("Await: %+v", q2.Deliveries())
	}
	q2.Close()
	if err := q2.WaitIdle(ctx); err != delivery.ErrClosed {
		t.Fatalf("WaitIdle after Close: %v", err)
	}
	if ids := q2.Enqueue(job(delivery.Pspy, rc.URL, "tr_3")); ids != nil {
		t.Fatalf("enqueued after Close: %v", ids)
	}
}

func TestTheDeliveriesLogIsNewestFirstAndFiltered(t *testing.T) {
	rc := newReceiver(t, func(_ int, r *http.Request) int {
		if b, _ := io.ReadAll(r.Body); strings.Contains(string(b), "bad") {
			return 500
		}
		return 200
	})
	q := newQueue(t, 1)
	q.Enqueue(job(delivery.Pspy, rc.URL, "tr_ok"))
	px := job(delivery.Pspx, rc.URL, "")
	px.PaymentID, px.EventID, px.Type, px.Mode, px.Body = "", "evt_1", "invoice.paid", "live", []byte(`{"id":"evt_1"}`)
	q.Enqueue(px)
	q.Enqueue(job(delivery.Pspy, rc.URL, "tr_bad"))
	deadline := time.Now().Add(10 * time.Second)
	for len(rc.received()) < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the last attempt be recorded
	h := q.DeliveriesHandler()
	get := func(query string) (int, []map[string]any) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/_sandbox/deliveries"+query, nil))
		var body struct{ Deliveries []map[string]any }
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		return rec.Code, body.Deliveries
	}
	ids := func(ds []map[string]any) (out []string) {
		for _, d := range ds {
			out = append(out, fmt.Sprint(d["eventId"], d["paymentId"]))
		}
		return out
	}
	cases := []struct {
		query string
		want  []string
	}{
		{"", []string{"<nil>tr_bad", "evt_1<nil>", "<nil>tr_ok"}},
		{"?provider=pspy", []string{"<nil>tr_bad", "<nil>tr_ok"}},
		{"?provider=pspx&status=delivered", []string{"evt_1<nil>"}},
		{"?status=pending", []string{"<nil>tr_bad"}},
		{"?status=failed", nil},
		{"?limit=1", []string{"<nil>tr_bad"}},
	}
	for _, tc := range cases {
		code, ds := get(tc.query)
		if code != 200 || !slices.Equal(ids(ds), tc.want) {
			t.Errorf("%q: %d %v, want %v", tc.query, code, ids(ds), tc.want)
		}
	}
	_, all := get("?provider=pspx")
	d := all[0]
	a := d["attempts"].([]any)[0].(map[string]any)
	if d["mode"] != "live" || d["type"] != "invoice.paid" || d["url"] != rc.URL || d["status"] != "delivered" ||
		a["n"] != 1.0 || a["status"] != 200.0 || a["outcome"] != "delivered" || a["error"] != "" {
		t.Fatalf("pspx delivery %v", d)
	}
	if _, err := time.Parse(time.RFC3339, a["at"].(string)); err != nil {
		t.Fatalf("attempt time %v: %v", a["at"], err)
	}
	for _, bad := range []string{"?provider=other", "?status=done", "?limit=0", "?limit=1001", "?limit=x"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/_sandbox/deliveries"+bad, nil))
		var e struct{ Error, Field string }
		if err := json.Unmarshal(rec.Body.Bytes(), &e); rec.Code != 400 || err != nil || e.Error == "" || !strings.Contains(bad, e.Field+"=") {
			t.Errorf("%q: %d %s", bad, rec.Code, rec.Body)
		}
	}
}

func TestTheFaultsEndpointSetsShowsAndClearsAndNamesTheFieldItRefuses(t *testing.T) {
	q := newQueue(t, 1)
	h := q.FaultsHandler()
	do := func(method, body string) (int, map[string]any) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, "/_sandbox/faults", strings.NewReader(body)))
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out
	}
	cases := []struct {
		body  string
		field string
	}{
		{`{"provider": "other"}`, "provider"},
		{`{"duplicate": -1}`, "duplicate"},
		{`{"duplicate": 11}`, "duplicate"},
		{`{"delayMs": 60001}`, "delayMs"},
		{`{"drop": -3}`, "drop"},
		{`{"failFirst": 101}`, "failFirst"},
		{`{"timeoutMs": 120001}`, "timeoutMs"},
		{`{"timeoutMs": 1.5}`, "timeoutMs"},
		{`{"reorder": "yes"}`, "reorder"},
		{`{"drops": 1}`, "drops"},
		{``, ""},
		{`[]`, ""},
		{`{"drop": 1} {}`, ""},
		{`not json`, ""},
	}
	for _, tc := range cases {
		code, out := do("POST", tc.body)
		if code != 400 || out["error"] == nil || out["error"] == "" || fmt.Sprint(out["field"]) != map[bool]string{true: "<nil>", false: tc.field}[tc.field == ""] {
			t.Errorf("POST %s: %d %v, want 400 naming %q", tc.body, code, out, tc.field)
		}
	}
	if code, out := do("POST", `{"provider": "pspy", "duplicate": 1, "reorder": true, "delayMs": 5, "drop": 2, "failFirst": 1}`); code != 200 ||
		out["provider"] != "pspy" || out["drop"] != 2.0 || out["timeoutMs"] != 10000.0 || out["reorder"] != true {
		t.Fatalf("POST: %d %v", code, out)
	}
	if code, out := do("GET", ""); code != 200 || out["failFirst"] != 1.0 || out["delayMs"] != 5.0 || out["duplicate"] != 1.0 {
		t.Fatalf("GET: %d %v", code, out)
	}
	if code, out := do("DELETE", ""); code != 200 || out["drop"] != 0.0 || out["provider"] != "" || out["timeoutMs"] != 10000.0 {
		t.Fatalf("DELETE: %d %v", code, out)
	}
	if code, _ := do("PUT", "{}"); code != http.StatusMethodNotAllowed {
		t.Fatalf("PUT: %d", code)
	}
}
