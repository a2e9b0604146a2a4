package authn

import (
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
