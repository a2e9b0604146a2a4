package domain

import (
	"testing"
	"time"
)

func TestAChallengeIsMetOnlyByItsOwnCodeUnderTheServerKey(t *testing.T) {
	key := []byte("server key")
	c, secrets, err := NewChallenge(PurposeVerifyEmail, "app", "user", "ada@example.test", Continuation{}, time.Unix(0, 0), key)
	if err != nil {
		t.Fatal(err)
	}
	if !WellFormedCode(secrets.Code) || !WellFormedSecret(secrets.Link) {
		t.Fatalf("minted code %q or link %q is not well formed", secrets.Code, secrets.Link)
	}
	other, otherSecrets, err := NewChallenge(PurposeVerifyEmail, "app", "user", "ada@example.test", Continuation{}, time.Unix(0, 0), key)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		c    Challenge
		code string
		key  []byte
		want bool
	}{
		{"its own code", c, secrets.Code, key, true},
		{"its code under another key", c, secrets.Code, []byte("other key"), false},
		{"another challenge's code", c, otherSecrets.Code, key, otherSecrets.Code == secrets.Code},
		{"its code against another challenge", other, secrets.Code, key, false},
		{"the empty code", c, "", key, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.CodeMatches(tc.code, tc.key); got != tc.want {
				t.Errorf("CodeMatches = %v, want %v", got, tc.want)
			}
		})
	}
	if !c.Continue.Empty() {
		t.Error("a challenge without an authorization request continues one")
	}
	if string(HashSecret(secrets.Link)) != string(c.LinkHash) {
		t.Error("the link hash is not the stored form of the link")
	}
}

func TestAChallengeIsLiveUntilUsedExpiredOrOutOfAttempts(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	used := t0
	cases := []struct {
		name    string
		purpose ChallengePurpose
		mutate  func(*Challenge)
		at      time.Time
		want    bool
	}{
		{"fresh", PurposeVerifyEmail, func(*Challenge) {}, t0, true},
		{"a verification a day later less a second", PurposeVerifyEmail, func(*Challenge) {}, t0.Add(24*time.Hour - time.Second), true},
		{"a verification after a day", PurposeVerifyEmail, func(*Challenge) {}, t0.Add(24 * time.Hour), false},
		{"a reset after 14 minutes", PurposeResetPassword, func(*Challenge) {}, t0.Add(14 * time.Minute), true},
		{"a reset after 15 minutes", PurposeResetPassword, func(*Challenge) {}, t0.Add(15 * time.Minute), false},
		{"a link code after 9 minutes", PurposeLinkProvider, func(*Challenge) {}, t0.Add(9 * time.Minute), true},
		{"a link code after 10 minutes", PurposeLinkProvider, func(*Challenge) {}, t0.Add(10 * time.Minute), false},
		{"used", PurposeChangeEmail, func(c *Challenge) { c.UsedAt = &used }, t0, false},
		{"one attempt left", PurposeVerifyEmail, func(c *Challenge) { c.CodeAttempts = MaxCodeAttempts - 1 }, t0, true},
		{"out of attempts", PurposeVerifyEmail, func(c *Challenge) { c.CodeAttempts = MaxCodeAttempts }, t0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := NewChallenge(tc.purpose, "app", "user", "ada@example.test", Continuation{}, t0, []byte("k"))
			if err != nil {
				t.Fatal(err)
			}
			tc.mutate(&c)
			if got := c.Live(tc.at); got != tc.want {
				t.Errorf("Live = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOnlyCodesOfSixDigitsAreWellFormed(t *testing.T) {
	for code, want := range map[string]bool{
		"123456": true, "000000": true, "12345": false, "1234567": false, "12345a": false, "١٢٣٤٥٦": false, "": false,
	} {
		if got := WellFormedCode(code); got != want {
			t.Errorf("WellFormedCode(%q) = %v, want %v", code, got, want)
		}
	}
}

func TestAChallengeOfAnUnknownPurposeIsRefused(t *testing.T) {
	if _, _, err := NewChallenge("unlock_everything", "app", "user", "a@example.test", Continuation{}, time.Now(), []byte("k")); err == nil {
		t.Error("NewChallenge accepted an unknown purpose")
	}
}
