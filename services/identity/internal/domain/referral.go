package domain

import (
	"crypto/rand"
	"fmt"
	"github.com/berthhq/berth/pkg/fault"
	"time"
)

// Referral is an invite's referral code (route 23): a new user signing up to the app with it is
// recorded as referred by the inviter. Only the code's SHA-256 is stored (HashSecret): the code is
// a 256-bit random secret, so the hash cannot be reversed or guessed, and a database dump does not
// yield codes that could attribute sign-ups to someone.
type Referral struct {
	Hash      []byte
	AppID     string
	InviterID string // the inviting user
	CreatedAt time.Time
	ExpiresAt time.Time
}

// ReferralTTL is how long an invite's code counts on sign-up.
const ReferralTTL = 30 * 24 * time.Hour

// ErrInviteLimit is returned by the referral store when the inviter reached the invite limit.
var ErrInviteLimit = fault.Exhausted(0, "daily invite limit reached")

// NewReferral mints a code for an invite by inviter (a user of appID) and returns it with the
// record to store.
func NewReferral(appID, inviterID string, now time.Time) (code string, r Referral, err error) {
	code, hash, err := NewSecret()
	if err != nil {
		return "", Referral{}, err
	}
	now = now.UTC()
	return code, Referral{Hash: hash, AppID: appID, InviterID: inviterID, CreatedAt: now, ExpiresAt: now.Add(ReferralTTL)}, nil
}

// Expired reports whether the code no longer counts at now.
func (r Referral) Expired(now time.Time) bool { return !now.Before(r.ExpiresAt) }

// stateAlphabet and StateLength describe the state of an invite link: the hosted page and the
// app's callback treat it like any authorization request's state.
const (
	stateAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	StateLength   = 64
)

// NewState returns StateLength random characters of [A-Za-z0-9], uniformly distributed (bytes
// that would bias the modulo are drawn again).
func NewState() (string, error) {
	const limit = 256 - 256%len(stateAlphabet)
	out := make([]byte, 0, StateLength)
	buf := make([]byte, StateLength)
	for len(out) < StateLength {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("random state: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < StateLength {
				out = append(out, stateAlphabet[int(b)%len(stateAlphabet)])
			}
		}
	}
	return string(out), nil
}
