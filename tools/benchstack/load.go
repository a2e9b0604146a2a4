package main

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// op sends one request as worker w and reports a failure (non-2xx answer, transport error). Each
// worker calls its op sequentially, so an op may keep per-worker state indexed by w.
type op func(ctx context.Context, w int) error

// phase is what one timed run of an op produced.
type phase struct {
	requests  int
	failures  int
	firstFail string
	elapsed   time.Duration
	latencies []time.Duration // sorted
}

func (p phase) rps() float64 {
	if p.elapsed <= 0 {
		return 0
	}
	return float64(p.requests) / p.elapsed.Seconds()
}

// newClient is a keep-alive client holding at most conns connections to one loopback server. It
// never uses a proxy from the environment, and its timeout is generous: a refresh request the
// client gave up on may still have rotated the token, and presenting the old one again would revoke
// the worker's whole family.
func newClient(conns int) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// drive runs conns workers calling o back to back for d or until maxRequests were sent, whichever
// comes first, and returns the latencies of the requests it sent.
func drive(ctx context.Context, conns int, d time.Duration, maxRequests int, o op) phase {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var sent atomic.Int64
	return runWorkers(conns, func(w int, l *workerLog) {
		for ctx.Err() == nil && sent.Add(1) <= int64(maxRequests) {
			t0 := time.Now()
			err := o(context.WithoutCancel(ctx), w)
			l.record(time.Since(t0), err)
		}
	})
}

// pace sends o at rate requests per second for d (open loop), over conns workers, and measures
// each request from the moment it was due rather than from when a worker got to it: a server that
// falls behind is charged the queueing it causes, which a closed loop (drive) would hide by simply
// sending less. Requests still due when d ends are not sent.
func pace(ctx context.Context, conns int, d time.Duration, rate float64, o op) phase {
	if rate <= 0 {
		return phase{}
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	due := make(chan time.Time, conns*64)
	start := time.Now()
	go func() {
		defer close(due)
		interval := time.Duration(float64(time.Second) / rate)
		next := start
		for ctx.Err() == nil {
			// Hand out every request due by now, then sleep briefly: the schedule, not the
			// sleep's precision, decides when each request was due.
			for now := time.Now(); !next.After(now); next = next.Add(interval) {
				select {
				case due <- next:
				case <-ctx.Done():
					return
				}
			}
			time.Sleep(min(interval, time.Millisecond))
		}
	}()
	return runWorkers(conns, func(w int, l *workerLog) {
		for at := range due {
			if ctx.Err() != nil {
				break
			}
			err := o(context.WithoutCancel(ctx), w)
			l.record(time.Since(at), err)
		}
	})
}

// workerLog is what one worker saw: its latencies, failures and first failure.
type workerLog struct {
	latencies []time.Duration
	failures  int
	firstFail string
}

func (l *workerLog) record(latency time.Duration, err error) {
	l.latencies = append(l.latencies, latency)
	if err != nil {
		l.failures++
		if l.firstFail == "" {
			l.firstFail = err.Error()
		}
	}
}

// runWorkers starts conns workers, each with its own log, and returns the phase they made together.
func runWorkers(conns int, work func(w int, l *workerLog)) phase {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		all workerLog
	)
	start := time.Now()
	for w := range conns {
		wg.Go(func() {
			l := workerLog{latencies: make([]time.Duration, 0, 4096)}
			work(w, &l)
			mu.Lock()
			defer mu.Unlock()
			all.latencies = append(all.latencies, l.latencies...)
			all.failures += l.failures
			if all.firstFail == "" {
				all.firstFail = l.firstFail
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	sortDurations(all.latencies)
	return phase{requests: len(all.latencies), failures: all.failures, firstFail: all.firstFail, elapsed: elapsed, latencies: all.latencies}
}
