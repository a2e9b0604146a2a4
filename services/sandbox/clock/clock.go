package clock

import (
	"context"
	"sync"
	"time"
)

// Clock is real time shifted by an offset that Advance grows.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
	hooks  []func(ctx context.Context, now time.Time)
	now    func() time.Time // real time source; time.Now outside tests
}

// New returns a clock at real time.
func New() *Clock { return &Clock{now: time.Now} }

// Now is the sandbox time, in UTC.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now().Add(c.offset).UTC()
}

// OnAdvance registers work to run after every advance, in registration order, with the new time.
func (c *Clock) OnAdvance(hook func(ctx context.Context, now time.Time)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hooks = append(c.hooks, hook)
}

// Advance moves the clock forward by d (negative durations are ignored: sandbox time never runs
// backwards, as provider time does not) and runs the hooks before returning the new time.
func (c *Clock) Advance(ctx context.Context, d time.Duration) time.Time {
	c.mu.Lock()
	if d > 0 {
		c.offset += d
	}
	hooks := append([]func(context.Context, time.Time){}, c.hooks...)
	now := c.now().Add(c.offset).UTC()
	c.mu.Unlock()
	for _, h := range hooks {
		h(ctx, now)
	}
	return now
}
