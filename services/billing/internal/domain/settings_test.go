package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

func TestRenewalLineFillsInTheAppsText(t *testing.T) {
	start := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2026, 5, 1, 0, 0, 0, 0, time.FixedZone("CEST", 2*3600)) // rendered in UTC
	for _, c := range []struct{ text, want string }{
		{"", ""},
		{"Team plan", "Team plan"},
		{"{quantity} × Team plan, {start} to {end}", "3 × Team plan, 2026-04-01 to 2026-04-30"},
		{"{end} {end} {unknown}", "2026-04-30 2026-04-30 {unknown}"},
	} {
		if got := (Settings{RenewalLineDescription: c.text}).RenewalLine(3, start, end); got != c.want {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
}

func TestSettingsPatchBoundsTheRenewalLineDescription(t *testing.T) {
	s := DefaultSettings("app")
	ok := strings.Repeat("é", maxLineDescription)
	if err := (SettingsPatch{RenewalLineDescription: &ok}).Apply(&s); err != nil || s.RenewalLineDescription != ok {
		t.Fatalf("%d characters: %v", maxLineDescription, err)
	}
	long := ok + "x"
	err := (SettingsPatch{RenewalLineDescription: &long}).Apply(&s)
	if f, isFault := fault.As(err); !isFault || f.Field() != "renewalLineDescription" || s.RenewalLineDescription != ok {
		t.Fatalf("one more: %v, kept %d characters", err, len(s.RenewalLineDescription))
	}
	empty := ""
	if err := (SettingsPatch{RenewalLineDescription: &empty}).Apply(&s); err != nil || s.RenewalLineDescription != "" {
		t.Fatalf("clearing: %v", err)
	}
}
