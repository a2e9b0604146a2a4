package clock

import (
	"context"
	"testing"
	"time"
)

func TestAdvanceMovesNowForwardAndRunsHooksWithTheNewTime(t *testing.T) {
	base := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	c := &Clock{now: func() time.Time { return base }}
	var seen []time.Time
	c.OnAdvance(func(_ context.Context, now time.Time) { seen = append(seen, now) })

	got := c.Advance(context.Background(), 24*time.Hour)
	want := base.Add(24 * time.Hour)
	if !got.Equal(want) || !c.Now().Equal(want) {
		t.Fatalf("after advance: returned %v, Now %v, want %v", got, c.Now(), want)
	}
	if len(seen) != 1 || !seen[0].Equal(want) {
		t.Fatalf("hook saw %v, want [%v]", seen, want)
	}
}

func TestAdvanceNeverMovesBackwards(t *testing.T) {
	base := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	c := &Clock{now: func() time.Time { return base }}
	c.Advance(context.Background(), time.Hour)
	if got := c.Advance(context.Background(), -2*time.Hour); !got.Equal(base.Add(time.Hour)) {
		t.Fatalf("negative advance moved the clock to %v", got)
	}
}
