package domain

import (
	"github.com/berthhq/berth/pkg/fault"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestDescribeAPIKey(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	base := APIKey{ID: "k", AppID: "a", Type: KeyRead, Name: "old", Description: "old text", CreatedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Hour)}
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name              string
		newName, newDesc  *string
		wantErr           string // field; "" = accepted
		wantName, wantDsc string
	}{
		{"name only", s("  new  "), nil, "", "new", "old text"},
		{"description only", nil, s("new text"), "", "old", "new text"},
		{"description cleared", nil, s(""), "", "old", ""},
		{"both", s("n"), s("d"), "", "n", "d"},
		{"neither", nil, nil, "name", "", ""},
		{"blank name", s(" "), nil, "name", "", ""},
		{"name of 128 characters", s(strings.Repeat("ä", 128)), nil, "", strings.Repeat("ä", 128), "old text"},
		{"name of 129 characters", s(strings.Repeat("ä", 129)), nil, "name", "", ""},
		{"description of 1024 characters", nil, s(strings.Repeat("d", 1024)), "", "old", strings.Repeat("d", 1024)},
		{"description of 1025 characters", nil, s(strings.Repeat("d", 1025)), "description", "", ""},
		{"control character in the description", nil, s("a\nb"), "description", "", ""},
		{"valid name with an invalid description", s("n"), s("a\x00"), "description", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := base
			err := k.Describe(tc.newName, tc.newDesc, now)
			if tc.wantErr != "" {
				if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != tc.wantErr {
					t.Fatalf("error = %v, want a validation error on %s", err, tc.wantErr)
				}
				if !reflect.DeepEqual(k, base) {
					t.Errorf("a refused change altered the key: %+v", k)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := base
			want.Name, want.Description, want.UpdatedAt = tc.wantName, tc.wantDsc, now
			if !reflect.DeepEqual(k, want) {
				t.Errorf("key = %+v, want %+v", k, want)
			}
		})
	}
}

func TestReferralExpiresAfterThirtyDays(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	code, r, err := NewReferral("app", "user", now)
	if err != nil {
		t.Fatal(err)
	}
	if !WellFormedSecret(code) || string(r.Hash) != string(HashSecret(code)) || r.AppID != "app" || r.InviterID != "user" {
		t.Fatalf("referral = %+v for code %q", r, code)
	}
	for _, tc := range []struct {
		after time.Duration
		want  bool
	}{
		{0, false},
		{30*24*time.Hour - time.Nanosecond, false},
		{30 * 24 * time.Hour, true},
		{31 * 24 * time.Hour, true},
	} {
		if got := r.Expired(now.Add(tc.after)); got != tc.want {
			t.Errorf("Expired after %v = %v, want %v", tc.after, got, tc.want)
		}
	}
}

func TestNewStateIsSixtyFourAlphanumerics(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9]{64}$`)
	seen := map[string]bool{}
	for range 50 {
		s, err := NewState()
		if err != nil {
			t.Fatal(err)
		}
		if !re.MatchString(s) || seen[s] {
			t.Fatalf("state %q (repeated: %v)", s, seen[s])
		}
		seen[s] = true
	}
}
