package authn

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A flood of distinct valid credentials (every refresh mints a new token) must not grow the cache
// without bound: entries past their expiry are dropped, and the number of live entries is capped.
func TestCacheMemoryIsBoundedUnderDistinctCredentials(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ok := func() (string, error) { return "v", nil }
	noExpiry := func(string) time.Time { return time.Time{} }

	t.Run("expired entries are dropped", func(t *testing.T) {
		c := newTTLCache[string](time.Minute)
		c.now = func() time.Time { return now }
		for i := range 100 {
			if _, err := c.get(fmt.Sprint("first-", i), ok, noExpiry); err != nil {
				t.Fatal(err)
			}
		}
		now = now.Add(2 * time.Minute) // every entry is past its TTL
		if _, err := c.get("after-expiry", ok, noExpiry); err != nil {
			t.Fatal(err)
		}
		if n := c.len(); n != 1 {
			t.Fatalf("cache holds %d entries after the first 100 expired, want only the fresh one", n)
		}
	})

	t.Run("live entries are capped", func(t *testing.T) {
		c := newTTLCache[string](time.Hour)
		c.now = func() time.Time { return now }
		c.maxEntries = 10
		for i := range 100 {
			if _, err := c.get(fmt.Sprint("live-", i), ok, noExpiry); err != nil {
				t.Fatal(err)
			}
		}
		if n := c.len(); n > 10 {
			t.Fatalf("cache holds %d live entries, want at most its cap of 10", n)
		}
		// The newest verification is the one kept: it is the likeliest to be presented again.
		calls := 0
		if _, err := c.get("live-99", func() (string, error) { calls++; return "v", nil }, noExpiry); err != nil || calls != 0 {
			t.Fatalf("the newest entry was evicted (calls %d, err %v)", calls, err)
		}
	})
}

// blockingTokens answers like identity did before a freeze, but only once the test lets it: the
// verification is in flight while the freeze's Forget runs.
type blockingTokens struct {
	fakeTokens
	started, release chan struct{}
}

func (b *blockingTokens) VerifyAccessToken(ctx context.Context, raw string) (Principal, error) {
	p, err := b.fakeTokens.VerifyAccessToken(ctx, raw)
	if b.started != nil {
		close(b.started)
		<-b.release
		b.started = nil
	}
	return p, err
}

func TestVerificationInFlightDuringForgetIsNotCached(t *testing.T) {
	inner := &blockingTokens{started: make(chan struct{}), release: make(chan struct{})}
	c := NewTokenCache(inner, time.Hour)
	ctx := context.Background()

	done := make(chan error)
	go func() {
		_, err := c.VerifyAccessToken(ctx, "token-u1")
		done <- err
	}()
	<-inner.started
	c.Forget("app-1", "user-1") // the user is frozen while identity's earlier answer is on its way
	close(inner.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	if _, err := c.VerifyAccessToken(ctx, "token-u1"); err != nil {
		t.Fatal(err)
	}
	if n := inner.calls.Load(); n != 2 {
		t.Fatalf("inner verifier called %d times, want 2: the answer from before the freeze was cached", n)
	}
}
