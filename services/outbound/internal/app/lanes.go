package app

import (
	"context"
	"log/slog"
	"sync"

	"github.com/berthhq/berth/services/outbound/internal/domain"
)

// Lane bounds. A consumer leases a new delivery to its own runner (hands it off) only while the
// endpoint's lane and all lanes together are below their soft bound; deliveries the consumer could
// not hand off stay in the database for the next claim. The hard bounds catch what concurrent
// consumers added past the soft ones: what is pushed past them is given back to the claims.
const (
	laneSoft  = 16 * perEndpoint
	laneHard  = 2 * laneSoft
	totalSoft = 16384
	totalHard = 2 * totalSoft
)

// lanes are the runner's per-endpoint queues. An endpoint has a lane while this process sends its
// deliveries: one goroutine sends the lane's batches one after the other, and claims skip the
// endpoint meanwhile. Every delivery in a lane is leased to this process, so a lane lost with the
// process comes back to the claims when the leases end.
type lanes struct {
	mu     sync.Mutex
	open   bool // a runner is running: deliveries may be handed off to it
	run    run
	wg     sync.WaitGroup
	lanes  map[string]*lane
	queued int // deliveries waiting in every lane
	// behind are the endpoints with deliveries left in the store while their lane ran, which the
	// runner claims once the lane ends.
	behind map[string]bool
}

type lane struct {
	waiting []domain.Delivery
}

// run is what one RunDeliveries gives the lanes' goroutines: the context their sends run under,
// the logger, and where a sent batch's outcomes go to be recorded.
type run struct {
	ctx        context.Context
	log        *slog.Logger
	recordings chan<- recording
}

// start opens the lanes for a runner.
func (l *lanes) start(r run) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open, l.run, l.lanes, l.queued, l.behind = true, r, map[string]*lane{}, 0, map[string]bool{}
}

// stop closes the lanes and returns the deliveries still waiting (not yet sent), for the runner
// to give back; the lanes' goroutines end after the batch each is sending.
func (l *lanes) stop() []domain.Delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open = false
	var left []domain.Delivery
	for _, ln := range l.lanes {
		left = append(left, ln.waiting...)
		ln.waiting = nil
	}
	l.queued = 0
	return left
}

// admit reports whether a new delivery to endpoint may be handed off to the runner.
func (l *lanes) admit(endpoint string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.open || l.queued >= totalSoft {
		return false
	}
	ln := l.lanes[endpoint]
	return ln == nil || len(ln.waiting) < laneSoft
}

// leaveBehind marks endpoint as having deliveries left in the store, for its lane's end to report,
// and reports whether it has a lane; without one, nothing is marked and the caller wakes the runner.
func (l *lanes) leaveBehind(endpoint string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lanes[endpoint] == nil {
		return false
	}
	l.behind[endpoint] = true
	return true
}

// busy lists the endpoints that have a lane, which claims skip: claiming more of theirs would only
// queue it behind what the lane holds.
func (l *lanes) busy() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.lanes))
	for id := range l.lanes {
		out = append(out, id)
	}
	return out
}

// push queues leased deliveries on their endpoints' lanes, starting send for each lane that was
// idle, and returns those beyond the hard bounds (or all, once stopped), which the caller gives
// back.
func (l *lanes) push(ds []domain.Delivery, send func(r run, endpoint string)) (refused []domain.Delivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.open {
		return ds
	}
	for _, d := range ds {
		ln := l.lanes[d.EndpointID]
		if ln == nil {
			ln = &lane{}
			l.lanes[d.EndpointID] = ln
			id, r := d.EndpointID, l.run
			l.wg.Go(func() { send(r, id) })
		}
		if len(ln.waiting) >= laneHard || l.queued >= totalHard {
			refused = append(refused, d)
			continue
		}
		ln.waiting = append(ln.waiting, d)
		l.queued++
	}
	return refused
}

// next takes the endpoint's next batch, at most n deliveries, oldest first. With none waiting (or
// the lanes stopped) it removes the lane and returns no batch, and whether deliveries of the
// endpoint were left behind in the store meanwhile: the lane's goroutine ends.
func (l *lanes) next(endpoint string, n int) (batch []domain.Delivery, behind bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.lanes[endpoint]
	if !l.open || ln == nil || len(ln.waiting) == 0 {
		behind = l.behind[endpoint]
		delete(l.lanes, endpoint)
		delete(l.behind, endpoint)
		return nil, behind
	}
	n = min(n, len(ln.waiting))
	batch = ln.waiting[:n:n]
	ln.waiting = ln.waiting[n:]
	l.queued -= n
	return batch, false
}

// logger is the runner's logger, or the default one when none runs.
func (l *lanes) logger() *slog.Logger {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.run.log == nil {
		return slog.Default()
	}
	return l.run.log
}

// wait waits for the lanes' goroutines to end.
func (l *lanes) wait() { l.wg.Wait() }
