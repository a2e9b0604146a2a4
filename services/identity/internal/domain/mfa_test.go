package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
)

// codeAt is the six-digit code of secret for time step step.
func codeAt(t *testing.T, secret string, step int64) string {
	t.Helper()
	c, err := hotp.GenerateCodeCustom(secret, uint64(step), hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTOTPCodesMatchWithinOneStepOfSkewAndNeverTwice(t *testing.T) {
	const secret = "JBSWY3DPEHPK3PXP"
	now := time.Unix(1_700_000_015, 0) // inside step 56666667
	step := TOTPStep(now)
	cases := []struct {
		name     string
		code     string
		lastStep int64
		want     int64
		ok       bool
	}{
		{"the current step", codeAt(t, secret, step), 0, step, true},
		{"the previous step (a code typed as it rolled over)", codeAt(t, secret, step-1), 0, step - 1, true},
		{"the next step (a clock slightly ahead)", codeAt(t, secret, step+1), 0, step + 1, true},
		{"two steps back is too old", codeAt(t, secret, step-2), 0, 0, false},
		{"two steps ahead is too early", codeAt(t, secret, step+2), 0, 0, false},
		{"the current step once used is a replay", codeAt(t, secret, step), step, 0, false},
		{"an earlier step after a later one was used", codeAt(t, secret, step-1), step, 0, false},
		{"the next step after the current one was used", codeAt(t, secret, step+1), step, step + 1, true},
		{"spaces and a dash are ignored", codeAt(t, secret, step)[:3] + " - " + codeAt(t, secret, step)[3:], 0, step, true},
		{"five digits", codeAt(t, secret, step)[:5], 0, 0, false},
		{"letters", "12a456", 0, 0, false},
		{"empty", "", 0, 0, false},
		{"another secret's code", codeAt(t, "GEZDGNBVGY3TQOJQ", step), 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := MatchTOTP(secret, c.code, now, c.lastStep)
			if ok != c.ok || got != c.want {
				t.Errorf("MatchTOTP = %d, %v; want %d, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func TestRecoveryCodesAreTenDistinctOnesStoredOnlyAsKeyedHashes(t *testing.T) {
	key := []byte("pepper")
	plain, stored, err := NewRecoveryCodes("app", "user", time.Unix(0, 0), key)
	if err != nil {
		t.Fatal(err)
	}
	if len(plain) != RecoveryCodeCount || len(stored) != RecoveryCodeCount {
		t.Fatalf("%d codes, %d stored; want %d", len(plain), len(stored), RecoveryCodeCount)
	}
	seen := map[string]bool{}
	for i, c := range plain {
		if seen[c] {
			t.Errorf("code %q twice", c)
		}
		seen[c] = true
		if !WellFormedRecoveryCode(c) || len(c) != 11 || c[5] != '-' {
			t.Errorf("code %q is not two groups of five", c)
		}
		if string(stored[i].Hash) == c || strings.Contains(string(stored[i].Hash), c) {
			t.Errorf("stored form holds the code")
		}
		for _, typed := range []string{c, strings.ToUpper(c), strings.ReplaceAll(c, "-", ""), " " + c[:5] + " " + c[6:]} {
			if string(RecoveryCodeHash("user", typed, key)) != string(stored[i].Hash) {
				t.Errorf("typed %q does not hash to the stored code", typed)
			}
		}
		if string(RecoveryCodeHash("other user", c, key)) == string(stored[i].Hash) {
			t.Errorf("another user's hash of the code matches")
		}
		if string(RecoveryCodeHash("user", c, []byte("other key"))) == string(stored[i].Hash) {
			t.Errorf("the hash under another key matches")
		}
	}
	for _, bad := range []string{"", "abcde-fghj", "abcde-fghjkm", "abcde-fgh1k", "abcdo-fghjk", "123456"} {
		if WellFormedRecoveryCode(bad) {
			t.Errorf("WellFormedRecoveryCode(%q) = true", bad)
		}
	}
}

func TestMFAPolicyParsesTheThreeNamesAndDefaultsToOptional(t *testing.T) {
	for in, want := range map[string]MFAPolicy{"": MFAOptional, "off": MFAOff, "optional": MFAOptional, "required": MFARequired} {
		got, err := ParseMFAPolicy("mfa", in)
		if err != nil || got != want {
			t.Errorf("ParseMFAPolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"Required", "on", "always", " optional"} {
		if _, err := ParseMFAPolicy("mfa", bad); err == nil {
			t.Errorf("ParseMFAPolicy(%q) accepted", bad)
		}
	}
}

func TestACRNamesMultiFactorOnlyWhenAMRSaysSo(t *testing.T) {
	for _, c := range []struct {
		amr  []string
		want string
	}{
		{nil, ACRSingleFactor},
		{[]string{AMRPassword}, ACRSingleFactor},
		{[]string{AMRPassword, AMROTP, AMRMulti}, ACRMultiFactor},
	} {
		if got := ACR(c.amr); got != c.want {
			t.Errorf("ACR(%v) = %q, want %q", c.amr, got, c.want)
		}
	}
}
