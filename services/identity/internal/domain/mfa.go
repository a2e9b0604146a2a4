package domain

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"

	"github.com/berthhq/berth/pkg/fault"
)

// MFAPolicy is an app's rule for second factors.
type MFAPolicy string

const (
	// MFAOff means users cannot enrol, and sign-in never asks for a second factor, even of users who
	// enrolled while the app allowed it (their factors stay stored for when it does again).
	MFAOff MFAPolicy = "off"
	// MFAOptional means users may enrol on the account page; sign-in asks those who did. The default.
	MFAOptional MFAPolicy = "optional"
	// MFARequired means every sign-in needs a second factor; a user without one enrols at sign-in.
	MFARequired MFAPolicy = "required"
)

// ParseMFAPolicy reads a policy as the admin API and berthctl write it; "" selects the default
// (MFAOptional).
func ParseMFAPolicy(field, s string) (MFAPolicy, error) {
	switch MFAPolicy(s) {
	case "":
		return MFAOptional, nil
	case MFAOff, MFAOptional, MFARequired:
		return MFAPolicy(s), nil
	}
	return "", fault.InvalidField(field, "must be %q, %q or %q", MFAOff, MFAOptional, MFARequired)
}

// FactorKind names a kind of second factor.
type FactorKind string

const (
	// FactorTOTP is a time-based one-time password app (RFC 6238). A user has at most one.
	FactorTOTP FactorKind = "totp"
	// FactorPasskey is a WebAuthn credential (a passkey or security key). A user may have
	// several; each is stored confirmed, as its registration proves it.
	FactorPasskey FactorKind = "passkey"
)

// Single reports whether a user holds at most one confirmed factor of the kind.
func (k FactorKind) Single() bool { return k == FactorTOTP }

// NotFound is the error for an absent factor of kind k, naming it as people do.
func (k FactorKind) NotFound() error {
	if k == FactorTOTP {
		return NotFound("TOTP factor")
	}
	return NotFound(string(k))
}

// Factor is a user's second factor. A factor is pending from its enrolment's start until its
// first code confirms it; only confirmed factors are asked for at sign-in.
type Factor struct {
	ID     string
	AppID  string
	UserID string
	Kind   FactorKind
	// SealedSecret is sealed by the application layer under the factor's id: a TOTP key's
	// otpauth URL (which holds the secret: a database dump alone yields no codes), or a passkey's
	// WebAuthn credential record.
	SealedSecret []byte
	// LastStep is the latest TOTP time step a code was accepted for (a code of that step or an
	// earlier one is refused, so an observed code cannot be used again), or a passkey's signature
	// counter (an assertion must raise it, unless the authenticator keeps none).
	LastStep    int64
	CreatedAt   time.Time
	ConfirmedAt *time.Time
	// Name and LastUsedAt are kept for member accounts' factors only: what the member called a
	// passkey (NewPasskeyName), so the console's list tells their devices apart, and when a
	// factor last proved a sign-in.
	Name       string
	LastUsedAt *time.Time
}

// maxPasskeyName bounds a passkey's name: a device's, not a description.
const maxPasskeyName = 64

// NewPasskeyName trims and checks the name a member gives a passkey: required, one line, at
// most 64 characters.
func NewPasskeyName(s string) (string, error) {
	s, err := requiredName("name", s)
	if err != nil {
		return "", err
	}
	return s, checkText("name", s, maxPasskeyName)
}

// Confirmed reports whether the factor's enrolment was completed.
func (f Factor) Confirmed() bool { return f.ConfirmedAt != nil }

// PendingFactorTTL is how long an enrolment may wait for its confirming code; an older pending
// factor is replaced by a fresh secret.
const PendingFactorTTL = 15 * time.Minute

// NewTOTPFactor starts a TOTP enrolment: a fresh factor and its key, whose secret and otpauth URL
// are shown to the user during the enrolment (the caller seals the key's URL into the factor).
func NewTOTPFactor(appID, userID, issuer, account string, now time.Time) (Factor, *otp.Key, error) {
	key, err := totp.Generate(totp.GenerateOpts{
		Issuer: issuer, AccountName: account, Period: TOTPPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1,
	})
	if err != nil {
		return Factor{}, nil, fmt.Errorf("generate totp key: %w", err)
	}
	return Factor{ID: uuid.NewString(), AppID: appID, UserID: userID, Kind: FactorTOTP, CreatedAt: now.UTC()}, key, nil
}

// TOTP parameters: what every authenticator app supports (RFC 6238's defaults), and one step of
// clock skew either way, so a code typed as it rolls over still counts.
const (
	TOTPPeriod = 30
	TOTPSkew   = 1
)

// TOTPStep is the time step of t.
func TOTPStep(t time.Time) int64 { return t.Unix() / TOTPPeriod }

// MatchTOTP checks a typed code against the secret at now: it returns the time step the code
// belongs to when it is the code of a step within the skew and after lastStep, in constant time
// per candidate. A replayed code (its step at or before lastStep) never matches.
func MatchTOTP(secret, code string, now time.Time, lastStep int64) (int64, bool) {
	code = NormalizeCode(code)
	if len(code) != 6 || strings.Trim(code, "0123456789") != "" {
		return 0, false
	}
	now0 := TOTPStep(now)
	for step := now0 - TOTPSkew; step <= now0+TOTPSkew; step++ {
		if step <= lastStep || step < 0 {
			continue
		}
		want, err := hotp.GenerateCodeCustom(secret, uint64(step), hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return step, true
		}
	}
	return 0, false
}

// NormalizeCode drops the spaces and dashes people type into codes and lower-cases them.
func NormalizeCode(s string) string {
	return strings.ToLower(strings.NewReplacer(" ", "", "-", "", "\t", "").Replace(s))
}

// RecoveryCodeCount is how many recovery codes a user holds after enrolment or regeneration.
const RecoveryCodeCount = 10

// recoveryAlphabet has the 31 letters and digits without the look-alikes 0/o, 1/l/i: a code of
// 10 characters carries more than 49 bits.
const recoveryAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// recoveryCodeLen is a code's characters, shown as two groups of five.
const recoveryCodeLen = 10

// RecoveryCode is one stored recovery code: an HMAC of the code under the server's key and the
// user, never the code itself.
type RecoveryCode struct {
	AppID     string
	UserID    string
	Hash      []byte
	CreatedAt time.Time
	UsedAt    *time.Time
}

// NewRecoveryCodes mints RecoveryCodeCount codes for the user: the codes to show once and their
// stored form.
func NewRecoveryCodes(appID, userID string, now time.Time, key []byte) ([]string, []RecoveryCode, error) {
	codes := make([]string, 0, RecoveryCodeCount)
	stored := make([]RecoveryCode, 0, RecoveryCodeCount)
	for range RecoveryCodeCount {
		b, err := randomText(recoveryAlphabet, recoveryCodeLen)
		if err != nil {
			return nil, nil, err
		}
		code := b[:5] + "-" + b[5:]
		codes = append(codes, code)
		stored = append(stored, RecoveryCode{AppID: appID, UserID: userID, Hash: RecoveryCodeHash(userID, code, key), CreatedAt: now.UTC()})
	}
	return codes, stored, nil
}

// randomText draws n characters of alphabet (at most 256 of them) uniformly: bytes at or above
// the largest multiple of the alphabet's size are drawn again, so no character is more likely.
func randomText(alphabet string, n int) (string, error) {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("random recovery code: %w", err)
		}
		for _, c := range buf {
			if int(c) < limit && len(out) < n {
				out = append(out, alphabet[int(c)%len(alphabet)])
			}
		}
	}
	return string(out), nil
}

// WellFormedRecoveryCode reports whether s, normalised, has a recovery code's shape.
func WellFormedRecoveryCode(s string) bool {
	s = NormalizeCode(s)
	if len(s) != recoveryCodeLen {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune(recoveryAlphabet, r) {
			return false
		}
	}
	return true
}

// RecoveryCodeHash is the stored form of a user's recovery code (normalised first, so the
// grouping dash and case do not matter). It is keyed like challenge codes, so a dump of the
// hashes does not let anyone search the codes offline.
func RecoveryCodeHash(userID, code string, key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("berth recovery code\x00" + userID + "\x00" + NormalizeCode(code)))
	return m.Sum(nil)
}

// Authentication methods (RFC 8176) carried by the tokens' amr claim.
const (
	AMRPassword = "pwd" // the password
	AMROTP      = "otp" // a TOTP code or a recovery code (both one-time passwords)
	// AMRHardwareKey is a passkey: proof of possession of a key the authenticator holds.
	AMRHardwareKey = "hwk"
	AMRMulti       = "mfa" // more than one factor
	// AMRFederated is a sign-in through one of the app's identity providers. RFC 8176's registry
	// has no value for it; "fed" is the one relying parties commonly meet.
	AMRFederated = "fed"
)

// Authentication context classes of the ID token's acr claim.
const (
	ACRSingleFactor = "urn:berth:acr:sfa"
	ACRMultiFactor  = "urn:berth:acr:mfa"
)

// ACR is the acr claim for a sign-in of the methods amr.
func ACR(amr []string) string {
	for _, m := range amr {
		if m == AMRMulti {
			return ACRMultiFactor
		}
	}
	return ACRSingleFactor
}

// ErrCodeReplayed is answered when a TOTP code of a step already used arrives again (two racing
// sign-ins with one code: only one wins).
var ErrCodeReplayed = fault.Invalid("code", "this code was used already; wait for the next one")

// ErrFactorEnrolled is answered when a user starts enrolling a kind of factor they hold already.
var ErrFactorEnrolled = fault.Precondition("a second factor of this kind is enrolled already")
