package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
)

// PasswordHasher hashes and verifies passwords (password.Hasher in production; tests substitute
// one that counts concurrent hashes).
type PasswordHasher interface {
	Hash(pw string) (string, error)
	Verify(phc, pw string) bool
	// Burn spends the time and memory of one verification without a stored hash, so an unknown
	// email answers like a wrong password.
	Burn(pw string)
}

// HashMemoryBudget is the memory all concurrent password hashes may take together when no
// concurrency is configured: the default bound is this budget divided by one hash's argon2 memory
// cost (256 MiB / 19 MiB = 13 with the default costs).
const HashMemoryBudget = 256 << 20

// DefaultHashWait is how long a sign-in or sign-up may wait for a hashing slot before it is
// answered "busy". It absorbs a burst (a hash takes tens of milliseconds) without letting a queue
// grow: a waiter holds no hash memory, and none waits longer than this.
const DefaultHashWait = 250 * time.Millisecond

// DefaultHashConcurrency is the number of password hashes that may run at once for argon2 costs p:
// HashMemoryBudget over the memory one hash takes, at least 1. More would not finish sooner anyway
// on a few cores; it would only hold more memory.
func DefaultHashConcurrency(p password.Params) int {
	if p.MemoryKiB == 0 {
		p = password.DefaultParams
	}
	return max(1, HashMemoryBudget/(int(p.MemoryKiB)<<10))
}

// errBusy answers an attempt that found every hashing slot taken. Retrying after a second is
// likely to find one free.
var errBusy = fault.Exhausted(time.Second, "too many sign-ins at once; try again in a moment")

// hashGate bounds concurrent password hashing: argon2id takes its whole memory cost per hash, so
// unbounded parallel sign-ins would take the process's memory with them.
type hashGate struct {
	slots chan struct{}
	wait  time.Duration
}

func newHashGate(n int, wait time.Duration) *hashGate {
	return &hashGate{slots: make(chan struct{}, n), wait: wait}
}

// run runs fn in a hashing slot, waiting at most the gate's wait for one; it returns errBusy when
// none became free, without running fn.
func (g *hashGate) run(ctx context.Context, fn func()) error {
	select {
	case g.slots <- struct{}{}:
	default:
		t := time.NewTimer(g.wait)
		defer t.Stop()
		select {
		case g.slots <- struct{}{}:
		case <-t.C:
			return errBusy
		case <-ctx.Done():
			return fault.Unavailable(0, "request cancelled")
		}
	}
	defer func() { <-g.slots }()
	fn()
	return nil
}

// hash is Hash under the gate.
func (s *Service) hash(ctx context.Context, pw string) (string, error) {
	var (
		h   string
		err error
	)
	if gateErr := s.hashes.run(ctx, func() { h, err = s.passwords.Hash(pw) }); gateErr != nil {
		return "", gateErr
	}
	return h, err
}

// verify is Verify under the gate.
func (s *Service) verify(ctx context.Context, phc, pw string) (bool, error) {
	var ok bool
	err := s.hashes.run(ctx, func() { ok = s.passwords.Verify(phc, pw) })
	return ok, err
}

// burn is Burn under the gate.
func (s *Service) burn(ctx context.Context, pw string) error {
	return s.hashes.run(ctx, func() { s.passwords.Burn(pw) })
}
