package delivery

import (
	"fmt"
	"time"
)

// Faults are the misbehaviours the queue adds to deliveries, to test how a receiver copes with
// what providers do now and then. The zero value (with TimeoutMs 0 meaning the default) is a
// well-behaved provider.
type Faults struct {
	// Provider limits the faults to one provider's deliveries; "" applies them to both.
	Provider Provider `json:"provider"`
	// Duplicate sends each attempt this many extra times, concurrently. The attempt's record is
	// the answer to the first copy.
	Duplicate int `json:"duplicate"`
	// Reorder sends deliveries that are ready together in shuffled order, not in the order of
	// their lane.
	Reorder bool `json:"reorder"`
	// DelayMs holds each attempt this long before it is sent.
	DelayMs int `json:"delayMs"`
	// Drop loses the next this-many attempts in transit: never sent, recorded as dropped and
	// retried on the schedule. It counts down as attempts are dropped.
	Drop int `json:"drop"`
	// FailFirst sends each delivery's first this-many attempts but records them as failed with
	// 500 whatever the receiver answered, so the receiver sees the same webhook again.
	FailFirst int `json:"failFirst"`
	// TimeoutMs is how long an attempt waits for the answer; 0 means 10000.
	TimeoutMs int `json:"timeoutMs"`
}

// Limits of the fault knobs: beyond them a value is a typo, not a test.
const (
	maxDuplicate = 10
	maxDelayMs   = 60_000
	maxDrop      = 10_000
	maxFailFirst = 100
	maxTimeoutMs = 120_000
)

// FieldError is a fault set refused, naming the field at fault.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func (f Faults) applies(p Provider) bool { return f.Provider == "" || f.Provider == p }

// check validates a fault set and fills in the default timeout.
func (f *Faults) check() *FieldError {
	if f.Provider != "" && f.Provider != Pspx && f.Provider != Pspy {
		return &FieldError{"provider", `provider must be "pspx", "pspy" or "" (both)`}
	}
	for _, k := range []struct {
		field    string
		v, limit int
	}{
		{"duplicate", f.Duplicate, maxDuplicate}, {"delayMs", f.DelayMs, maxDelayMs}, {"drop", f.Drop, maxDrop},
		{"failFirst", f.FailFirst, maxFailFirst}, {"timeoutMs", f.TimeoutMs, maxTimeoutMs},
	} {
		if k.v < 0 || k.v > k.limit {
			return &FieldError{k.field, fmt.Sprintf("%s must be a whole number from 0 to %d", k.field, k.limit)}
		}
	}
	if f.TimeoutMs == 0 {
		f.TimeoutMs = int(defaultTimeout / time.Millisecond)
	}
	return nil
}

// SetFaults replaces the fault set; a *FieldError says what is wrong with a refused one.
func (q *Queue) SetFaults(f Faults) error {
	if err := f.check(); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.faults = f
	q.notify() // a reorder or a lane rule may have changed what is ready
	return nil
}

// Faults returns the fault set in force; its Drop is the number of drops still to come.
func (q *Queue) Faults() Faults {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.faults
}

// ClearFaults removes every fault.
func (q *Queue) ClearFaults() {
	_ = q.SetFaults(Faults{})
}
