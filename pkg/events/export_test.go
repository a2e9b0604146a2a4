package events

import (
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// SetClock makes o record events as published at the times now returns, so tests can age them.
func (o *MemoryOutbox) SetClock(now func() time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.now = now
}

// PublishedLen is how many published events o still keeps.
func (o *MemoryOutbox) PublishedLen() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.published)
}

// SetMemoryInboxClock makes in, from NewMemoryInbox, record events as processed at the times now
// returns.
func SetMemoryInboxClock(in Inbox, now func() time.Time) {
	m := in.(*memoryInbox)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = now
}

// MemoryInboxLen is how many records in, from NewMemoryInbox, keeps.
func MemoryInboxLen(in Inbox) int {
	m := in.(*memoryInbox)
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.done)
}

// ContextOf is the context, and so the stream, an event type belongs to.
func ContextOf(t eventsv1.Type) (string, error) { return contextOf(t) }

// NextWait is Run's wait after a pass (see nextWait).
func NextWait(prev time.Duration, n int, err error, wakes bool) time.Duration {
	return nextWait(prev, n, err, wakes)
}

// Consumed is the berth_events_consumed_total counter of one consumer and outcome.
func Consumed(consumer, outcome string) float64 {
	return testutil.ToFloat64(consumed.WithLabelValues(consumer, outcome))
}
