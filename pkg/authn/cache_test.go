package authn

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

type countingKeys struct {
	fakeKeys
	calls atomic.Int32
}

func (c *countingKeys) VerifyAPIKey(ctx context.Context, key, clientID string) (VerifiedKey, error) {
	c.calls.Add(1)
	return c.fakeKeys.VerifyAPIKey(ctx, key, clientID)
}

func newCounting() *countingKeys {
	return &countingKeys{fakeKeys: fakeKeys{
		"key-a": {KeyID: "ka", AppID: "app-1", Type: "read", AppEnabled: true},
		"key-b": {KeyID: "kb", AppID: "app-1", Type: "write", AppEnabled: true},
	}}
}

func TestKeyCacheServesRepeatsButNeverCachesFailuresOrOtherSecrets(t *testing.T) {
	inner := newCounting()
	c := NewKeyCache(inner, time.Minute)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := c.VerifyAPIKey(ctx, "key-a", "app-1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := inner.calls.Load(); n != 1 {
		t.Fatalf("inner verifier called %d times for one key, want 1", n)
	}
	for i := 0; i < 2; i++ {
		if _, err := c.VerifyAPIKey(ctx, "key-a-wrong", "app-1"); err == nil {
			t.Fatal("wrong key accepted")
		}
		if _, err := c.VerifyAPIKey(ctx, "key-a", "app-2"); err == nil {
			t.Fatal("key accepted for another client id")
		}
	}
	if n := inner.calls.Load(); n != 5 {
		t.Fatalf("failures must reach the verifier every time: %d calls", n)
	}
}

func TestKeyCacheEntriesExpireAndCanBeForgotten(t *testing.T) {
	inner := newCounting()
	c := NewKeyCache(inner, time.Minute)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.cache.now = func() time.Time { return now }
	ctx := context.Background()
	verify := func(key string) {
		if _, err := c.VerifyAPIKey(ctx, key, "app-1"); err != nil {
			t.Fatal(err)
		}
	}
	verify("key-a")
	verify("key-b")
	c.Forget("app-1", "ka") // only key-a
	verify("key-a")
	verify("key-b")
	if n := inner.calls.Load(); n != 3 {
		t.Fatalf("after forgetting one key: %d calls, want 3", n)
	}
	c.Forget("app-1", "") // the whole app
	verify("key-a")
	verify("key-b")
	now = now.Add(2 * time.Minute) // past the TTL
	verify("key-a")
	if n := inner.calls.Load(); n != 6 {
		t.Fatalf("after forgetting the app and expiry: %d calls, want 6", n)
	}
}

func TestKeyCacheForgetsAnAppWhenIdentityPublishesAChange(t *testing.T) {
	bus, _ := natstest.New(t)
	inner := newCounting()
	c := NewKeyCache(inner, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, err := c.Watch(ctx, bus)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if _, err := c.VerifyAPIKey(ctx, "key-a", "app-1"); err != nil {
		t.Fatal(err)
	}
	ev, err := events.New("identity", EventAppChanged, "app-1", &identityv1.AppChanged{AppId: "app-1", Enabled: false})
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the cache forgets the app's keys after an app.changed event", func() bool { return c.cache.len() == 0 })
}

func TestOperatorCacheForgetsAMembersTokensWhenTheirConsoleSessionEnds(t *testing.T) {
	bus, _ := natstest.New(t)
	const project, other = "project-1", "project-2"
	inner := &countingOperators{tokens: map[string]Principal{
		"signed-out": {Kind: KindOperator, ProjectID: project, UserID: "member-1"},
		"colleague":  {Kind: KindOperator, ProjectID: project, UserID: "member-2"},
		"elsewhere":  {Kind: KindOperator, ProjectID: other, UserID: "member-1"},
	}}
	c := NewOperatorCache(inner, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, err := c.Watch(ctx, bus)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, raw := range []string{"signed-out", "colleague", "elsewhere"} {
		if _, err := c.VerifyOperatorToken(ctx, raw); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := events.New("identity", EventMemberSessionEnded, "", &identityv1.MemberSessionEnded{ProjectId: project, MemberId: "member-1", SessionId: "s-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the signed-out member's token is forgotten", func() bool { return c.cache.len() == 2 })
	for _, raw := range []string{"colleague", "elsewhere"} {
		if _, err := c.VerifyOperatorToken(ctx, raw); err != nil {
			t.Fatal(err)
		}
	}
	if n := inner.calls.Load(); n != 3 {
		t.Fatalf("identity was asked %d times, want 3: the other members' tokens stay cached", n)
	}
}
