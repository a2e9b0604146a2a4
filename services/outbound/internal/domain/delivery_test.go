package domain_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/berthhq/berth/services/outbound/internal/domain"
)

func TestBackoffFollowsTheScheduleAndEndsOnSuccessOrExhaustion(t *testing.T) {
	mid := func() float64 { return 0.5 } // no jitter
	b := domain.Backoff{Scale: 1, Jitter: mid}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	d := domain.Delivery{Status: domain.StatusPending}
	for i, w := range want {
		d = b.After(d, domain.Attempt{At: at, Status: 500})
		if d.Status != domain.StatusPending || d.Attempts != i+1 || d.NextAttemptAt.Sub(at) != w {
			t.Fatalf("after failure %d: %s, attempts %d, next in %s; want pending, next in %s", i+1, d.Status, d.Attempts, d.NextAttemptAt.Sub(at), w)
		}
	}
	if d = b.After(d, domain.Attempt{At: at, Status: 500}); d.Status != domain.StatusFailed || d.Attempts != 8 {
		t.Errorf("after the eighth failure: %s with %d attempts, want failed", d.Status, d.Attempts)
	}
	ok := b.After(domain.Delivery{Status: domain.StatusPending, Attempts: 3}, domain.Attempt{At: at, Status: 204})
	if ok.Status != domain.StatusSucceeded {
		t.Errorf("a 204 left the delivery %s", ok.Status)
	}
	for _, status := range []int{0, 199, 301, 404, 500} {
		if (domain.Attempt{Status: status}).Succeeded() {
			t.Errorf("status %d counts as success", status)
		}
	}
}

func TestBackoffJittersByATenthAndScales(t *testing.T) {
	low := domain.Backoff{Scale: 1, Jitter: func() float64 { return 0 }}.Delay(1)
	high := domain.Backoff{Scale: 1, Jitter: func() float64 { return 1 }}.Delay(1)
	if low != 4500*time.Millisecond || high != 5500*time.Millisecond {
		t.Errorf("jitter bounds %s..%s, want 4.5s..5.5s", low, high)
	}
	scaled := domain.Backoff{Scale: 0.001, Jitter: func() float64 { return 0.5 }}.Delay(2)
	if scaled != 300*time.Millisecond {
		t.Errorf("5 min scaled by 0.001 is %s, want 300ms", scaled)
	}
}

func TestTruncateResponseKeeps64KiBOfValidText(t *testing.T) {
	big := strings.Repeat("x", domain.MaxResponseBytes+100)
	if got := domain.TruncateResponse([]byte(big)); len(got) != domain.MaxResponseBytes {
		t.Errorf("kept %d bytes, want %d", len(got), domain.MaxResponseBytes)
	}
	// A multi-byte character cut at the limit and a NUL byte must not reach a text column.
	cut := strings.Repeat("x", domain.MaxResponseBytes-1) + "ä"
	if got := domain.TruncateResponse([]byte(cut)); !utf8.ValidString(got) {
		t.Error("a cut character left invalid UTF-8")
	}
	if got := domain.TruncateResponse([]byte("a\x00b\xff")); strings.ContainsRune(got, 0) || !utf8.ValidString(got) {
		t.Errorf("%q keeps a NUL or invalid UTF-8", got)
	}
}
