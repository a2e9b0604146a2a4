package domain_test

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

func TestCheckURLAcceptsHTTPSAndHTTPOnlyWhereAllowed(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", domain.MaxURLLength)
	tests := []struct {
		name      string
		url       string
		allowHTTP bool
		ok        bool
	}{
		{"https", "https://example.com/hooks?x=1", false, true},
		{"http refused in production", "http://example.com/hooks", false, false},
		{"http allowed by the setting", "http://127.0.0.1:9999/", true, true},
		{"another scheme", "ftp://example.com/", true, false},
		{"relative", "/hooks", false, false},
		{"empty", "", false, false},
		{"user info", "https://user:pw@example.com/", false, false},
		{"fragment", "https://example.com/#x", false, false},
		{"space", "https://example.com/a b", false, false},
		{"control character", "https://example.com/\x01", false, false},
		{"invalid UTF-8", "https://example.com/\xff", false, false},
		{"too long", long, false, false},
		{"loopback literal in production", "https://127.0.0.1/h", false, false},
		{"metadata address in production", "https://169.254.169.254/latest", false, false},
		{"IPv6 loopback in production", "https://[::1]/h", false, false},
		{"localhost in production", "https://LOCALHOST/h", false, false},
		{"a public address", "https://8.8.8.8/h", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := domain.URLPolicy{AllowHTTP: tc.allowHTTP}.CheckURL("url", tc.url)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok {
				if err == nil {
					t.Fatal("accepted")
				}
				if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != "url" {
					t.Errorf("refusal %v is not an invalid-field fault naming url", err)
				}
			}
		})
	}
}

func TestCheckEventsKnowsThePublicTypesAndTheWildcard(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
		ok   bool
	}{
		{"known types sorted and deduplicated", []string{"user.updated", "payment.failed", "user.updated"}, []string{"payment.failed", "user.updated"}, true},
		{"wildcard absorbs the rest", []string{"user.updated", "*"}, []string{"*"}, true},
		{"none", nil, nil, false},
		{"unknown type", []string{"user.exploded"}, nil, false},
		{"an internal type is not public", []string{"identity.user.updated"}, nil, false},
		{"too many", slices.Repeat([]string{"user.created"}, domain.MaxEventTypes+1), nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := domain.CheckEvents("events", tc.in)
			if tc.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckDescriptionBoundsLengthInCharacters(t *testing.T) {
	if _, err := domain.CheckDescription("description", strings.Repeat("ä", domain.MaxDescriptionLength)); err != nil {
		t.Errorf("%d two-byte characters refused: %v", domain.MaxDescriptionLength, err)
	}
	if _, err := domain.CheckDescription("description", strings.Repeat("a", domain.MaxDescriptionLength+1)); err == nil {
		t.Error("an overlong description was accepted")
	}
	if _, err := domain.CheckDescription("description", "\xff"); err == nil {
		t.Error("invalid UTF-8 was accepted")
	}
}

func TestEndpointWantsItsTypesOrEveryTypeUnlessDisabled(t *testing.T) {
	e := domain.Endpoint{Events: []string{"user.updated"}}
	if !e.Wants("user.updated") || e.Wants("user.created") {
		t.Error("a listed endpoint wants exactly its types")
	}
	all := domain.Endpoint{Events: []string{domain.Wildcard}}
	if !all.Wants("payment.failed") {
		t.Error("the wildcard wants every type")
	}
	all.Disabled = true
	if all.Wants("payment.failed") {
		t.Error("a disabled endpoint wants nothing")
	}
}

func TestNewSecretIsWhsecAnd24RandomBytes(t *testing.T) {
	a, err := domain.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := domain.NewSecret()
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, domain.SecretPrefix))
	if !strings.HasPrefix(a, domain.SecretPrefix) || err != nil || len(raw) != 24 {
		t.Errorf("secret %q is not whsec_ and base64 of 24 bytes", a)
	}
	if a == b {
		t.Error("two secrets are equal")
	}
}

// The vector is the one the Standard Webhooks libraries test against, so a receiver using any of
// them verifies Berth's signatures.
func TestSignMatchesTheStandardWebhooksVector(t *testing.T) {
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		body   = `{"test": 2432232314}`
		want   = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	got, err := domain.Sign(id, time.Unix(1614265330, 0), []byte(body), secret)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("signature %s, want %s", got, want)
	}
	if !domain.Verify(secret, id, "1614265330", []byte(body), got) {
		t.Error("Verify refuses Sign's signature")
	}
	if domain.Verify(secret, id, "1614265331", []byte(body), got) {
		t.Error("Verify accepts another timestamp")
	}
	if domain.Verify(secret, id, "1614265330", []byte(body+" "), got) {
		t.Error("Verify accepts another body")
	}
}

func TestSignDuringARotationCarriesBothSignatures(t *testing.T) {
	oldSecret, _ := domain.NewSecret()
	newSecret, _ := domain.NewSecret()
	at := time.Unix(1700000000, 0)
	header, err := domain.Sign("id1", at, []byte("{}"), newSecret, oldSecret)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(header)); n != 2 {
		t.Fatalf("header %q holds %d signatures, want 2", header, n)
	}
	for _, s := range []string{oldSecret, newSecret} {
		if !domain.Verify(s, "id1", "1700000000", []byte("{}"), header) {
			t.Error("a receiver with one of the two secrets cannot verify")
		}
	}
	if _, err := domain.Sign("id1", at, nil, "not-a-secret"); err == nil {
		t.Error("a secret without whsec_ signed")
	}
}

func TestObserveDisablesAnEndpointAfterFiveDaysOfFailuresOnly(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name         string
		failingSince time.Time
		succeeded    bool
		now          time.Time
		changed      bool
		disabled     bool
		wantSince    time.Time
	}{
		{"a first failure starts the streak", time.Time{}, false, t0, true, false, t0},
		{"a failure within five days keeps it", t0, false, t0.Add(domain.DisableAfter - time.Second), false, false, t0},
		{"five days of failures disable", t0, false, t0.Add(domain.DisableAfter), true, true, t0},
		{"a success ends the streak", t0, true, t0.Add(time.Hour), true, false, time.Time{}},
		{"a success without a streak changes nothing", time.Time{}, true, t0, false, false, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := domain.Endpoint{FailingSince: tc.failingSince}
			changed, disabled := e.Observe(tc.succeeded, tc.now)
			if changed != tc.changed || disabled != tc.disabled || e.Disabled != tc.disabled || !e.FailingSince.Equal(tc.wantSince) {
				t.Errorf("changed %v disabled %v (endpoint %v, since %v), want %v %v since %v",
					changed, disabled, e.Disabled, e.FailingSince, tc.changed, tc.disabled, tc.wantSince)
			}
		})
	}
}
