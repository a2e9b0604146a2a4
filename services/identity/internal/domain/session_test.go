package domain

import (
	"strings"
	"testing"
	"time"
)

func TestAFamilyIsASessionUntilRevokedOrPastItsNewestTokensExpiry(t *testing.T) {
	end := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		revoked bool
		now     time.Time
		want    bool
	}{
		{"before its end", false, end.Add(-time.Microsecond), true},
		{"at its end", false, end, false},
		{"after its end", false, end.Add(time.Hour), false},
		{"revoked before its end", true, end.Add(-time.Hour), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := RefreshFamily{Revoked: c.revoked, ExpiresAt: end}
			if got := f.Live(c.now); got != c.want {
				t.Fatalf("Live = %t, want %t", got, c.want)
			}
		})
	}
}

func TestCheckUserAgentHoldsTheTextRuleAndTheLength(t *testing.T) {
	cases := []struct {
		name, ua string
		ok       bool
	}{
		{"none", "", true},
		{"a browser's", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0", true},
		{"exactly the limit in characters", strings.Repeat("ü", MaxUserAgent), true},
		{"one character more", strings.Repeat("a", MaxUserAgent+1), false},
		{"a control character", "Mozilla/5.0\t", false},
		{"invalid UTF-8", "Mozilla/5.0 \xc3", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckUserAgent(c.ua)
			if (err == nil) != c.ok {
				t.Fatalf("CheckUserAgent = %v, want ok %t", err, c.ok)
			}
		})
	}
}
