package domain

import (
	"math/rand/v2"
	"strings"
	"time"
)

// Delivery states.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// MaxResponseBytes bounds what is read and kept of a receiver's answer.
const MaxResponseBytes = 64 << 10

// AttemptTimeout is how long one attempt may take, connecting included.
const AttemptTimeout = 15 * time.Second

// Schedule is the delay before each attempt, counted from the previous failure: the first is
// immediate, the last comes about 32 hours after the event.
var Schedule = []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// Delivery is one public event on its way to one endpoint. ID is the webhook-id header: the same
// on every attempt, so a receiver drops a repeat.
type Delivery struct {
	ID         string
	AppID      string
	EndpointID string
	Type       string
	// Body is the exact request body, {"type","timestamp","data"}: what is signed and sent on
	// every attempt.
	Body          []byte
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	CreatedAt     time.Time
	// LeaseUntil is when the runner holding the delivery lets it go: until then no claim takes
	// it. Zero: no runner holds it. Stores keep it to the microsecond.
	LeaseUntil time.Time
}

// Attempt is one try of a delivery.
type Attempt struct {
	At       time.Time
	Status   int    // the HTTP status; 0 when no answer came
	Response string // the start of the answer's body, at most MaxResponseBytes
	Error    string // why no answer came
	Duration time.Duration
}

// Succeeded reports whether the receiver took the delivery: any 2xx.
func (a Attempt) Succeeded() bool { return a.Status >= 200 && a.Status < 300 }

// Backoff computes the next attempt's time under Schedule, scaled (tests run the schedule in
// milliseconds) and jittered by up to a tenth either way so endpoints that failed together do not
// retry together.
type Backoff struct {
	Scale  float64 // 1 in production; 0 means 1
	Jitter func() float64
}

// After applies attempt's outcome to d (attempts counted after it) and returns d with its new
// status and next attempt time: succeeded on a 2xx, failed when the schedule is exhausted,
// otherwise pending until the next delay has passed.
func (b Backoff) After(d Delivery, a Attempt) Delivery {
	d.Attempts++
	switch {
	case a.Succeeded():
		d.Status = StatusSucceeded
	case d.Attempts >= len(Schedule):
		d.Status = StatusFailed
	default:
		d.Status = StatusPending
		d.NextAttemptAt = a.At.Add(b.Delay(d.Attempts))
	}
	return d
}

// Scaled is d under the backoff's scale, without jitter.
func (b Backoff) Scaled(d time.Duration) time.Duration {
	if b.Scale <= 0 {
		return d
	}
	return time.Duration(float64(d) * b.Scale)
}

// Delay is the wait before attempt number n+1 (n attempts made), scaled and jittered.
func (b Backoff) Delay(n int) time.Duration {
	if n <= 0 || n >= len(Schedule) {
		return 0
	}
	scale := b.Scale
	if scale <= 0 {
		scale = 1
	}
	jitter := b.Jitter
	if jitter == nil {
		jitter = rand.Float64
	}
	base := float64(Schedule[n]) * scale
	return time.Duration(base * (0.9 + 0.2*jitter()))
}

// TruncateResponse keeps at most MaxResponseBytes of a body as valid UTF-8 text without NUL bytes,
// so it can be stored as text and shown.
func TruncateResponse(b []byte) string {
	if len(b) > MaxResponseBytes {
		b = b[:MaxResponseBytes]
	}
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "")
}
