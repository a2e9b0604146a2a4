package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/berthhq/berth/pkg/fault"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Length bounds in characters (runes), as NIST SP 800-63B sets them for passwords chosen by
// their users without composition rules: at least 8, and a ceiling that keeps one hash from
// becoming a denial-of-service lever while leaving room for pass phrases.
const (
	MinLength = 8
	MaxLength = 128
)

// minLocalPart is the shortest email local part a password may not contain. Shorter ones are
// exempt: refusing every password that holds "jo" for jo@example.com would refuse far more good
// passwords than it stops guessable ones.
const minLocalPart = 3

// Reasons name the rule a refused password broke (fault.Reason), so a page can say which one.
const (
	ReasonCharacters = "characters" // not valid UTF-8
	ReasonLength     = "length"     // outside MinLength..MaxLength characters
	ReasonBlank      = "blank"      // only whitespace
	ReasonCommon     = "common"     // on the list of common and breached passwords
	ReasonEmail      = "email"      // contains the email address's local part
)

// ErrPolicy is matched (errors.Is) by every password-policy violation.
var ErrPolicy = fault.Invalid("password", "password does not meet the policy")

// Check applies the password rules to pw, a password being chosen for the account with the given
// email address; every flow that sets a password calls it. Passwords are stored as typed (no
// trimming, no case folding); only the comparisons below normalise. The error is an Invalid fault
// on "password" whose message states the rule and whose reason names it.
func Check(pw, email string) error {
	if !utf8.ValidString(pw) {
		return violation(ReasonCharacters, "password must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(pw); n < MinLength || n > MaxLength {
		return violation(ReasonLength, "password must be %d to %d characters long", MinLength, MaxLength)
	}
	trimmed := strings.TrimFunc(pw, unicode.IsSpace)
	if trimmed == "" {
		return violation(ReasonBlank, "password must not be only spaces")
	}
	// Case and surrounding spaces do not make a listed password harder to guess: guessing tools
	// try those variants first.
	if isCommon(strings.ToLower(trimmed)) {
		return violation(ReasonCommon, "password is on a list of common or breached passwords")
	}
	lower := strings.ToLower(pw)
	for _, part := range localParts(email) {
		if strings.Contains(lower, part) {
			return violation(ReasonEmail, "password must not contain the email address's name (the part before @)")
		}
	}
	return nil
}

// localParts returns the lower-cased local part of email and, for a subaddress (name+tag@), the
// name before the "+", each only when it is at least minLocalPart characters long.
func localParts(email string) []string {
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return nil
	}
	local := strings.ToLower(strings.TrimSpace(email[:at]))
	var parts []string
	for _, p := range []string{local, strings.SplitN(local, "+", 2)[0]} {
		if utf8.RuneCountInString(p) >= minLocalPart && (len(parts) == 0 || parts[0] != p) {
			parts = append(parts, p)
		}
	}
	return parts
}

// violation is an Invalid fault on the password whose message is the rule that failed and whose
// reason names it; it matches ErrPolicy.
func violation(reason, format string, args ...any) error {
	return fault.Invalid("password", format, args...).WithReason(reason).Wrap(ErrPolicy)
}

// Params are argon2id cost parameters.
type Params struct {
	MemoryKiB uint32
	Time      uint32
	Threads   uint8
}

// DefaultParams follow OWASP's argon2id recommendation (19 MiB, 2 passes, 1 lane): a few tens of
// milliseconds per hash on a server core.
var DefaultParams = Params{MemoryKiB: 19 * 1024, Time: 2, Threads: 1}

const (
	saltLen = 16
	keyLen  = 32
)

// Upper bounds accepted when reading a stored hash, so a corrupted row cannot make one sign-in
// allocate gigabytes or spin for minutes.
const (
	maxMemoryKiB = 1 << 20 // 1 GiB
	maxTime      = 16
)

// Hasher hashes and verifies passwords with one set of parameters.
type Hasher struct {
	params Params
	// dummy is a hash of a random password, verified against when the account does not exist so that
	// an unknown email costs the same time as a wrong password (no account enumeration by timing).
	dummy string
}

// NewHasher returns a hasher for p (zero value: DefaultParams).
func NewHasher(p Params) (*Hasher, error) {
	if p == (Params{}) {
		p = DefaultParams
	}
	if p.MemoryKiB == 0 || p.MemoryKiB > maxMemoryKiB || p.Time == 0 || p.Time > maxTime || p.Threads == 0 {
		return nil, fmt.Errorf("password: invalid argon2id parameters %+v", p)
	}
	h := &Hasher{params: p}
	random := make([]byte, 24)
	if _, err := rand.Read(random); err != nil {
		return nil, fmt.Errorf("password: %w", err)
	}
	dummy, err := h.Hash(base64.RawStdEncoding.EncodeToString(random))
	if err != nil {
		return nil, err
	}
	h.dummy = dummy
	return h, nil
}

// Hash returns the PHC string of pw with a fresh salt.
func (h *Hasher) Hash(pw string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password: salt: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, h.params.Time, h.params.MemoryKiB, h.params.Threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version,
		h.params.MemoryKiB, h.params.Time, h.params.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// Verify reports whether pw matches the PHC hash. An empty or malformed hash never matches, but
// still costs one hash computation, like a wrong password.
func (h *Hasher) Verify(phc, pw string) bool {
	p, salt, want, err := parse(phc)
	if err != nil {
		h.Burn(pw)
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.MemoryKiB, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// Burn spends the time of one verification without a result, for the unknown-account path.
func (h *Hasher) Burn(pw string) {
	p, salt, want, err := parse(h.dummy)
	if err != nil {
		return // unreachable: dummy is our own well-formed hash
	}
	_ = argon2.IDKey([]byte(pw), salt, p.Time, p.MemoryKiB, p.Threads, uint32(len(want)))
}

// parse reads an argon2id PHC string.
func parse(phc string) (p Params, salt, key []byte, err error) {
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return Params{}, nil, nil, errors.New("not an argon2id hash")
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return Params{}, nil, nil, errors.New("unsupported argon2 version")
	}
	var threads uint32
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Time, &threads); err != nil {
		return Params{}, nil, nil, errors.New("bad argon2 parameters")
	}
	if p.MemoryKiB == 0 || p.MemoryKiB > maxMemoryKiB || p.Time == 0 || p.Time > maxTime || threads == 0 || threads > 255 {
		return Params{}, nil, nil, errors.New("argon2 parameters out of range")
	}
	p.Threads = uint8(threads)
	if salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(salt) < 8 {
		return Params{}, nil, nil, errors.New("bad salt")
	}
	if key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(key) < 16 || len(key) > 64 {
		return Params{}, nil, nil, errors.New("bad hash")
	}
	return p, salt, key, nil
}
