package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Status is where a delivery stands.
type Status string

// The statuses of a delivery.
const (
	Pending   Status = "pending"   // an attempt is due now, in flight or scheduled
	Delivered Status = "delivered" // an attempt was answered 2xx
	Failed    Status = "failed"    // the schedule ran out without a 2xx
)

// The outcomes of one attempt.
const (
	OutcomeDelivered = "delivered" // answered 2xx
	OutcomeFailed    = "failed"    // another status, a connection error, or a failFirst fault
	OutcomeDropped   = "dropped"   // lost in transit by the drop fault: never sent
	OutcomeTimeout   = "timeout"   // no answer within the timeout
)

// defaultTimeout is how long an attempt waits for the receiver's answer unless a fault says less.
const defaultTimeout = 10 * time.Second

// ErrClosed is WaitIdle's answer once the queue is closed: nothing pending will ever be sent.
var ErrClosed = errors.New("delivery: queue closed")

// Job is one webhook to deliver to one URL.
type Job struct {
	Provider  Provider
	Mode      string // "test" or "live"
	EventID   string // pspx: the event delivered
	PaymentID string // pspy: the payment the notification names
	Type      string // pspx: the event type; pspy: "notification"
	URL       string
	Body      []byte
	// Header gives one attempt's headers. It is called at every attempt with the real time of
	// that attempt, so pspx signs each attempt with the time it is sent (the receiver compares the
	// signature's time with its own clock) and with the endpoint's secrets of that moment.
	Header func(now time.Time) http.Header
	// Lane groups deliveries that go out in the order they were enqueued, such as all events for
	// one pspx endpoint: a delivery's first attempt waits until every earlier delivery of its lane
	// has made its first attempt. Retries keep no order, as with the providers.
	Lane string
}

// Attempt is one try at a delivery.
type Attempt struct {
	N       int       `json:"n"`
	At      time.Time `json:"at"`     // real time, when the attempt was sent (or dropped)
	Status  int       `json:"status"` // the receiver's HTTP status, 0 when there was none
	Outcome string    `json:"outcome"`
	Error   string    `json:"error"`
}

// Delivery is a job with its attempts, as /_sandbox/deliveries shows it. It never carries the
// body or headers, so no secret or signature leaks into the log.
type Delivery struct {
	ID            string     `json:"id"`
	Provider      Provider   `json:"provider"`
	Mode          string     `json:"mode"`
	EventID       string     `json:"eventId,omitempty"`
	PaymentID     string     `json:"paymentId,omitempty"`
	Type          string     `json:"type"`
	URL           string     `json:"url"`
	Status        Status     `json:"status"`
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty"` // while pending: when the next attempt is due (real time)
	Attempts      []Attempt  `json:"attempts"`
}

// Config configures a queue.
type Config struct {
	// TimeScale multiplies every wait of the retry schedules: 1 (or 0, the default) is the
	// providers' own pace; tests use small values such as 0.0001.
	TimeScale float64
	// Workers is how many attempts may be in flight at once; 0 means 4.
	Workers int
	Log     *slog.Logger // nil: discard
}

// Queue delivers jobs asynchronously. Its methods are safe for concurrent use.
type Queue struct {
	scale     float64
	log       *slog.Logger
	transport *http.Transport
	client    *http.Client

	ctx    context.Context // canceled by Close: ends delays and requests in flight
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every change, to wake whoever waits for one
	closed  bool
	seq     int64
	all     []*entry          // every delivery, oldest first
	byID    map[string]*entry // the same, by id
	pending []*entry          // deliveries not yet delivered or failed, oldest first
	lanes   map[string][]*entry
	faults  Faults // Drop counts down as attempts are dropped
}

type entry struct {
	Delivery
	job      Job
	seq      int64
	nextAt   time.Time
	inflight bool
}

// New starts a queue and its workers; Close stops them.
func New(cfg Config) *Queue {
	scale := cfg.TimeScale
	if scale <= 0 {
		scale = 1
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = 4
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	ctx, cancel := context.WithCancel(context.Background())
	q := &Queue{
		scale: scale, log: log, transport: tr, ctx: ctx, cancel: cancel,
		// A provider does not follow redirects: a 3xx is an answer that is not 2xx.
		client:  &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		changed: make(chan struct{}), byID: map[string]*entry{}, lanes: map[string][]*entry{},
		faults: Faults{TimeoutMs: int(defaultTimeout / time.Millisecond)},
	}
	for range workers {
		q.wg.Add(1)
		go q.work()
	}
	return q
}

// Close stops the workers, cancelling attempts in flight, and waits for them to end. Jobs still
// pending are never sent; jobs enqueued later are discarded.
func (q *Queue) Close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	q.notify()
	q.mu.Unlock()
	q.cancel()
	q.wg.Wait()
	q.transport.CloseIdleConnections()
}

// notify wakes every goroutine waiting for a change. The caller holds q.mu.
func (q *Queue) notify() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// Enqueue adds jobs, in order, and answers their delivery ids (none once the queue is closed).
// Jobs enqueued together are ready together, which is what the reorder fault shuffles.
func (q *Queue) Enqueue(jobs ...Job) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(jobs) == 0 {
		return nil
	}
	now := time.Now()
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		if _, ok := schedules[j.Provider]; !ok {
			panic(fmt.Sprintf("delivery: no retry schedule for provider %q", j.Provider))
		}
		q.seq++
		e := &entry{job: j, seq: q.seq, nextAt: now, Delivery: Delivery{
			ID: fmt.Sprintf("dlv_%d", q.seq), Provider: j.Provider, Mode: j.Mode, EventID: j.EventID,
			PaymentID: j.PaymentID, Type: j.Type, URL: j.URL, Status: Pending, Attempts: []Attempt{},
		}}
		q.all = append(q.all, e)
		q.byID[e.ID] = e
		q.pending = append(q.pending, e)
		q.lanes[j.Lane] = append(q.lanes[j.Lane], e)
		ids[i] = e.ID
	}
	q.notify()
	return ids
}

// WaitIdle returns once nothing is pending or in flight (a retry scheduled for later is
// pending), or with the context's error, or ErrClosed.
func (q *Queue) WaitIdle(ctx context.Context) error {
	for {
		q.mu.Lock()
		closed, idle, changed := q.closed, len(q.pending) == 0, q.changed
		q.mu.Unlock()
		switch {
		case closed:
			return ErrClosed
		case idle:
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Delivered reports whether every one of the deliveries was answered 2xx.
func (q *Queue) Delivered(ids ...string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, id := range ids {
		if e := q.byID[id]; e == nil || e.Status != Delivered {
			return false
		}
	}
	return true
}

// Await waits until every one of the deliveries is answered 2xx (true), or one has failed for
// good, or ctx ends (false). It gives up early, without waiting for ctx, once a delivery's next
// attempt is scheduled after ctx's deadline: nothing can change before the caller stops waiting.
func (q *Queue) Await(ctx context.Context, ids ...string) bool {
	deadline, hasDeadline := ctx.Deadline()
	for {
		q.mu.Lock()
		done, hopeless, changed := true, q.closed, q.changed
		for _, id := range ids {
			e := q.byID[id]
			switch {
			case e == nil || e.Status == Failed:
				hopeless = true
			case e.Status == Pending:
				done = false
				if hasDeadline && !e.inflight && e.nextAt.After(deadline) {
					hopeless = true
				}
			}
		}
		q.mu.Unlock()
		switch {
		case hopeless:
			return false
		case done:
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// Deliveries returns a copy of every delivery, newest first.
func (q *Queue) Deliveries() []Delivery {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Delivery, 0, len(q.all))
	for _, e := range slices.Backward(q.all) {
		out = append(out, e.snapshot())
	}
	return out
}

// snapshot copies a delivery. The caller holds q.mu.
func (e *entry) snapshot() Delivery {
	d := e.Delivery
	d.Attempts = slices.Clone(e.Attempts)
	if d.Status == Pending && !e.inflight {
		at := e.nextAt
		d.NextAttemptAt = &at
	}
	return d
}

// scaled is a schedule's wait in real time.
func (q *Queue) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * q.scale)
}

// plan is one attempt a worker took on: the delivery, the faults that apply to it, and whether
// the drop fault loses it.
type plan struct {
	e      *entry
	n      int
	faults Faults
	drop   bool
}

func (q *Queue) work() {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		p, wait := q.take(time.Now())
		closed, changed := q.closed, q.changed
		q.mu.Unlock()
		if closed {
			return
		}
		if p == nil {
			timer := time.NewTimer(wait)
			select {
			case <-changed:
			case <-timer.C:
			case <-q.ctx.Done():
			}
			timer.Stop()
			continue
		}
		q.record(p, q.attempt(p))
	}
}

// take picks the next attempt due at now and marks it in flight; with none due, it answers how
// long until one may be. The caller holds q.mu.
func (q *Queue) take(now time.Time) (*plan, time.Duration) {
	if q.closed {
		return nil, 0
	}
	wait := time.Hour
	var ready []*entry
	for _, e := range q.pending {
		reorder := q.faults.Reorder && q.faults.applies(e.Provider)
		if e.inflight || (len(e.Attempts) == 0 && !reorder && q.lanes[e.job.Lane][0] != e) {
			continue
		}
		if d := e.nextAt.Sub(now); d > 0 {
			wait = min(wait, d)
			continue
		}
		ready = append(ready, e)
	}
	if len(ready) == 0 {
		return nil, wait
	}
	e := ready[0] // the oldest, pending being in enqueue order
	if q.faults.Reorder {
		var shuffled []*entry
		for _, r := range ready {
			if q.faults.applies(r.Provider) {
				shuffled = append(shuffled, r)
			}
		}
		if len(shuffled) > 0 {
			e = shuffled[rand.IntN(len(shuffled))]
		}
	}
	e.inflight = true
	p := &plan{e: e, n: len(e.Attempts) + 1}
	if q.faults.applies(e.Provider) {
		p.faults = q.faults
		if q.faults.Drop > 0 {
			q.faults.Drop--
			p.drop = true
		}
	}
	return p, 0
}

// attempt makes one attempt, the faults applied, and answers its record.
func (q *Queue) attempt(p *plan) Attempt {
	f := p.faults
	if f.DelayMs > 0 {
		t := time.NewTimer(time.Duration(f.DelayMs) * time.Millisecond)
		select {
		case <-t.C:
		case <-q.ctx.Done():
			t.Stop()
		}
	}
	a := Attempt{N: p.n, At: time.Now().UTC()}
	if p.drop {
		a.Outcome, a.Error = OutcomeDropped, "lost in transit (drop fault): never sent"
		return a
	}
	timeout := defaultTimeout
	if f.TimeoutMs > 0 {
		timeout = time.Duration(f.TimeoutMs) * time.Millisecond
	}
	header := p.e.job.Header(a.At)
	var dups sync.WaitGroup
	for range f.Duplicate {
		dups.Go(func() { q.send(p.e.job, header, timeout) })
	}
	a.Status, a.Outcome, a.Error = q.send(p.e.job, header, timeout)
	dups.Wait()
	if a.Outcome == OutcomeDelivered && p.n <= f.FailFirst {
		a.Error = fmt.Sprintf("failFirst fault: the answer %d counts as a failure", a.Status)
		a.Status, a.Outcome = http.StatusInternalServerError, OutcomeFailed
	}
	return a
}

// send posts the job once and classifies the answer.
func (q *Queue) send(j Job, header http.Header, timeout time.Duration) (status int, outcome, problem string) {
	ctx, cancel := context.WithTimeout(q.ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.URL, bytes.NewReader(j.Body))
	if err != nil {
		return 0, OutcomeFailed, err.Error()
	}
	req.Header = header.Clone()
	resp, err := q.client.Do(req)
	if err != nil {
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			return 0, OutcomeTimeout, fmt.Sprintf("no answer within %s", timeout)
		}
		return 0, OutcomeFailed, err.Error()
	}
	// The answer's body means nothing to the provider; read a little of it so the connection
	// can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, OutcomeFailed, fmt.Sprintf("answered %d", resp.StatusCode)
	}
	return resp.StatusCode, OutcomeDelivered, ""
}

// record stores an attempt and decides what follows: delivered, failed for good, or the next
// attempt on the provider's schedule.
func (q *Queue) record(p *plan, a Attempt) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e := p.e
	e.inflight = false
	e.Attempts = append(e.Attempts, a)
	if a.N == 1 {
		lane := q.lanes[e.job.Lane]
		if i := slices.Index(lane, e); i >= 0 {
			lane = slices.Delete(lane, i, i+1)
		}
		if len(lane) == 0 {
			delete(q.lanes, e.job.Lane)
		} else {
			q.lanes[e.job.Lane] = lane
		}
	}
	schedule := schedules[e.Provider]
	switch {
	case a.Outcome == OutcomeDelivered:
		e.Status = Delivered
	case a.N > len(schedule):
		e.Status = Failed
	default:
		e.nextAt = time.Now().Add(q.scaled(schedule[a.N-1]))
	}
	if e.Status != Pending {
		q.pending = slices.DeleteFunc(q.pending, func(x *entry) bool { return x == e })
	}
	q.log.Debug("webhook attempt", "delivery", e.ID, "provider", e.Provider, "url", e.URL, "n", a.N, "outcome", a.Outcome, "status", a.Status, "error", a.Error)
	q.notify()
}
