package domain

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/berthhq/berth/pkg/fault"
)

// Limits of an endpoint's fields.
const (
	MaxURLLength         = 2048
	MaxDescriptionLength = 1000
	MaxEventTypes        = 64
	// SecretPrefix starts every endpoint secret, as Standard Webhooks writes them.
	SecretPrefix = "whsec_"
	// secretBytes is the secret's random length: 24 bytes, 192 bits.
	secretBytes = 24
	// RotationOverlap is how long the previous secret keeps signing beside a rotated one, so a
	// receiver can deploy the new one without refusing a delivery in between.
	RotationOverlap = 24 * time.Hour
)

// ErrNotFound is an endpoint or delivery that is absent or another app's.
var ErrNotFound = fault.NotFound("Webhook endpoint not found")

// ErrDeliveryNotFound is a delivery that is absent or another endpoint's.
var ErrDeliveryNotFound = fault.NotFound("Webhook delivery not found")

// Endpoint is an app's webhook endpoint. Its secrets are sealed by the use cases before storage;
// the domain carries them sealed so no store or log ever holds a plain one.
type Endpoint struct {
	ID          string
	AppID       string
	URL         string
	Events      []string // public types or "*"
	Description string
	Disabled    bool
	// Secret is the sealed current secret; Previous the sealed one before the last rotation, which
	// signs beside it until PreviousUntil.
	Secret        []byte
	Previous      []byte
	PreviousUntil time.Time
	// FailingSince is when the endpoint's attempts began failing with no success since (zero: the
	// last attempt succeeded, or none was made).
	FailingSince time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Wants reports whether the endpoint is sent events of type t.
func (e Endpoint) Wants(t string) bool {
	return !e.Disabled && (slices.Contains(e.Events, Wildcard) || slices.Contains(e.Events, t))
}

// DisableAfter is how long an endpoint may fail every attempt before it is disabled: a receiver
// gone for good stops costing attempts, and its operators re-enable it once it is back.
const DisableAfter = 5 * 24 * time.Hour

// Observe applies an attempt's outcome at now to the endpoint's failure streak and reports whether
// anything changed: a success ends the streak, a failure starts one, and a streak of DisableAfter
// or longer disables the endpoint (disabled is then true).
func (e *Endpoint) Observe(succeeded bool, now time.Time) (changed, disabled bool) {
	switch {
	case succeeded:
		changed = !e.FailingSince.IsZero()
		e.FailingSince = time.Time{}
	case e.FailingSince.IsZero():
		e.FailingSince, changed = now, true
	case !e.Disabled && now.Sub(e.FailingSince) >= DisableAfter:
		e.Disabled, changed, disabled = true, true, true
	}
	return changed, disabled
}

// Wildcard subscribes an endpoint to every public type.
const Wildcard = "*"

// URLPolicy is which endpoint URLs are accepted: https only in production, http too where a
// setting allows it (the all-in-one, so a newcomer can point it at a local receiver).
type URLPolicy struct{ AllowHTTP bool }

// CheckURL validates an endpoint URL under the policy.
func (p URLPolicy) CheckURL(field, raw string) (string, error) {
	if raw == "" {
		return "", fault.InvalidField(field, "is required")
	}
	if len(raw) > MaxURLLength {
		return "", fault.InvalidField(field, "must be at most %d characters", MaxURLLength)
	}
	if !utf8.ValidString(raw) || strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", fault.InvalidField(field, "must be a URL without spaces or control characters")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", fault.InvalidField(field, "must be an absolute URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowHTTP:
	default:
		if p.AllowHTTP {
			return "", fault.InvalidField(field, "must be an http or https URL")
		}
		return "", fault.InvalidField(field, "must be an https URL")
	}
	if u.User != nil {
		return "", fault.InvalidField(field, "must not carry a user name or password")
	}
	if u.Fragment != "" {
		return "", fault.InvalidField(field, "must not carry a fragment")
	}
	// The sender refuses internal addresses when connecting, whatever a name resolves to; a URL
	// that names one outright is refused here already, so the app learns it at once.
	if !p.AllowHTTP {
		host := strings.ToLower(u.Hostname())
		if ip, err := netip.ParseAddr(host); (err == nil && Refused(ip)) || host == "localhost" || strings.HasSuffix(host, ".localhost") {
			return "", fault.InvalidField(field, "must not name a loopback, private or link-local address")
		}
	}
	return u.String(), nil
}

// CheckEvents validates a subscription list: known public types or "*", no duplicates, at least one.
func CheckEvents(field string, types []string) ([]string, error) {
	if len(types) == 0 {
		return nil, fault.InvalidField(field, "must name at least one event type, or \"*\"")
	}
	if len(types) > MaxEventTypes {
		return nil, fault.InvalidField(field, "must name at most %d event types", MaxEventTypes)
	}
	out := make([]string, 0, len(types))
	for _, t := range types {
		if t != Wildcard && !IsPublicType(t) {
			return nil, fault.InvalidField(field, "names an unknown event type (see the webhooks documentation)")
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if slices.Contains(out, Wildcard) {
		return []string{Wildcard}, nil
	}
	slices.Sort(out)
	return out, nil
}

// CheckDescription validates free text: UTF-8 (control characters the edge's text rule already
// refuses), at most MaxDescriptionLength characters.
func CheckDescription(field, s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fault.InvalidField(field, "must be UTF-8")
	}
	if utf8.RuneCountInString(s) > MaxDescriptionLength {
		return "", fault.InvalidField(field, "must be at most %d characters", MaxDescriptionLength)
	}
	return s, nil
}

// NewSecret returns a fresh endpoint secret: "whsec_" and the base64 of 24 random bytes.
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// secretKey is the HMAC key of a secret: the bytes its base64 part encodes.
func secretKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, errors.New("outbound: a secret starts with " + SecretPrefix)
	}
	return base64.StdEncoding.DecodeString(rest)
}
