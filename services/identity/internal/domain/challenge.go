package domain

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"math/big"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/google/uuid"
)

// ChallengePurpose says what meeting a challenge proves, and so what it may change.
type ChallengePurpose string

// The purposes of challenges. A challenge of one purpose is never accepted for another: a
// verification mail's link cannot reset a password.
const (
	// PurposeVerifyEmail proves that the person signing up reads the user's address.
	PurposeVerifyEmail ChallengePurpose = "verify_email"
	// PurposeResetPassword proves it for someone who forgot the password.
	PurposeResetPassword ChallengePurpose = "reset_password"
	// PurposeChangeEmail proves that the user reads the new address of an email change.
	PurposeChangeEmail ChallengePurpose = "change_email"
	// PurposeSecondFactor is a sign-in whose password was right, waiting for its second factor.
	// Its link secret is the flow the hosted page carries; nothing is mailed.
	PurposeSecondFactor ChallengePurpose = "second_factor"
	// PurposeLinkProvider proves that the person linking a provider identity to an existing
	// account reads the account's address: the mailed code confirms the link. Its id travels
	// sealed in the pending link, so it is only ever met for that link; the link secret is unused.
	PurposeLinkProvider ChallengePurpose = "link_provider"
)

// TTL is how long a challenge of the purpose may be met. A reset proves control of an account
// whose password is unknown, so its window is short; verification and email-change mails are
// often opened hours later.
func (p ChallengePurpose) TTL() time.Duration {
	switch p {
	case PurposeResetPassword:
		return 15 * time.Minute
	case PurposeSecondFactor:
		// Long enough to find the phone, or enrol one at a required policy's first sign-in.
		return 10 * time.Minute
	case PurposeLinkProvider:
		// The pending link it confirms lives as long (the provider flow's ten minutes).
		return 10 * time.Minute
	}
	return 24 * time.Hour
}

// Valid reports whether p is one of the purposes above.
func (p ChallengePurpose) Valid() bool {
	switch p {
	case PurposeVerifyEmail, PurposeResetPassword, PurposeChangeEmail, PurposeSecondFactor, PurposeLinkProvider:
		return true
	}
	return false
}

// MaxCodeAttempts is how many wrong codes a challenge takes before it is dead. With
// CodeDigits digits a guesser has MaxCodeAttempts in 10^CodeDigits per mail, and mails are limited
// per address and per client address.
const (
	MaxCodeAttempts = 5
	CodeDigits      = 6
)

// Continuation is the authorization request a challenge continues once met: the browser that
// meets it lands on the app's redirect URI with a code, as after a sign-in. The zero value
// continues nothing (a challenge started by an app's server, or from the account page).
type Continuation struct {
	ClientID    string
	RedirectURI string
	State       string
	Nonce       string
	Scope       string
	// Service is how the sign-in that the continuation resumes began: "email" (or empty) or the
	// identity provider's slot, which the app's redirect_uri is told.
	Service string
}

// Empty reports whether there is no authorization request to continue.
func (c Continuation) Empty() bool { return c.RedirectURI == "" }

// Challenge is a mail's proof of control of an address: an opaque link secret and a short code,
// both single use and stored only as hashes. The link carries 256 bits and is hashed like the other
// secrets (HashSecret); the code is short, so its hash is an HMAC under a server key and the
// challenge id: a database dump alone does not let anyone try the million codes offline.
type Challenge struct {
	ID      string
	AppID   string
	UserID  string
	Purpose ChallengePurpose
	// Email is the address the mail went to: the user's address, or the new one of an email change.
	Email        string
	LinkHash     []byte
	CodeHash     []byte
	CodeAttempts int // wrong codes typed so far
	Continue     Continuation
	// Methods are the authentication methods (AMR) a second-factor challenge's sign-in proved
	// before it: the first factor, carried on to the tokens with the second.
	Methods   []string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time // set when met, or when a newer challenge of its user and purpose retired it
}

// ChallengeSecrets are what the mail carries; they exist only in the mail, never in a store.
type ChallengeSecrets struct {
	Link string
	Code string
}

// ErrChallengeSpent is returned when a challenge was met or retired already, expired, or used up
// its code attempts. The answer is the same for each, so it tells a guesser nothing.
var ErrChallengeSpent = fault.Invalid("code", "this link or code is no longer valid")

// NewChallenge mints a challenge of purpose for the user, mailed to email, continuing cont.
// codeKey is the server's key for code hashes (see Challenge).
func NewChallenge(purpose ChallengePurpose, appID, userID, email string, cont Continuation, now time.Time, codeKey []byte) (Challenge, ChallengeSecrets, error) {
	if !purpose.Valid() {
		return Challenge{}, ChallengeSecrets{}, fmt.Errorf("unknown challenge purpose %q", purpose)
	}
	link, linkHash, err := NewSecret()
	if err != nil {
		return Challenge{}, ChallengeSecrets{}, err
	}
	code, err := newCode()
	if err != nil {
		return Challenge{}, ChallengeSecrets{}, err
	}
	now = now.UTC()
	c := Challenge{
		ID: uuid.NewString(), AppID: appID, UserID: userID, Purpose: purpose, Email: email,
		LinkHash: linkHash, Continue: cont, CreatedAt: now, ExpiresAt: now.Add(purpose.TTL()),
	}
	c.CodeHash = c.codeHash(code, codeKey)
	return c, ChallengeSecrets{Link: link, Code: code}, nil
}

// newCode draws CodeDigits uniformly random decimal digits.
func newCode() (string, error) {
	limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(CodeDigits), nil)
	n, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return "", fmt.Errorf("random code: %w", err)
	}
	return fmt.Sprintf("%0*d", CodeDigits, n), nil
}

func (c Challenge) codeHash(code string, key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("berth challenge code\x00" + c.ID + "\x00" + code))
	return m.Sum(nil)
}

// CodeMatches reports whether code is the challenge's code, in constant time.
func (c Challenge) CodeMatches(code string, codeKey []byte) bool {
	return hmac.Equal(c.codeHash(code, codeKey), c.CodeHash)
}

// WellFormedCode reports whether s looks like a code NewChallenge issues; anything else is a wrong
// code without a lookup (it still counts as an attempt).
func WellFormedCode(s string) bool {
	if len(s) != CodeDigits {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Live reports whether the challenge may still be met at now.
func (c Challenge) Live(now time.Time) bool {
	return c.UsedAt == nil && now.Before(c.ExpiresAt) && c.CodeAttempts < MaxCodeAttempts
}
