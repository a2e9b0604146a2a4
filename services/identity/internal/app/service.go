package app

import (
	"crypto/rsa"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// Source is the producer name on every event this service emits.
const Source = "identity"

// DefaultIssuer is the tokens' iss when none is configured. Deployments set their own (clients
// compare it with the issuer they were configured with).
const DefaultIssuer = "berth"

// Config holds what the use cases depend on.
type Config struct {
	Store  Store
	Pepper []byte       // HMAC pepper of API-key secrets
	Box    *sealbox.Box // seals app private keys at rest
	Clock  func() time.Time
	// Tenants creates the tenant of a user signing up; nil makes sign-up answer Unavailable.
	Tenants Tenants
	// Issuer is the iss of issued tokens ("" = DefaultIssuer).
	Issuer string
	// PublicURL is the REST edge's public base URL, for the discovery document.
	PublicURL string
	// Passwords are the argon2id costs of new password hashes (zero = password.DefaultParams).
	Passwords password.Params
	// Limits are the attempt limits (zero fields = DefaultLoginLimits').
	Limits LoginLimits
	// Hasher replaces the argon2id hasher built from Passwords (tests observe hashing with it).
	Hasher PasswordHasher
	// HashConcurrency bounds the password hashes running at once (0 = DefaultHashConcurrency of
	// Passwords); HashWait is how long an attempt waits for a slot (0 = DefaultHashWait).
	HashConcurrency int
	HashWait        time.Duration
	// Mailer sends the referral invites of route 23 and the password-reset mails; nil makes both
	// answer Unavailable.
	Mailer mail.Sender
	// Providers talks to the apps' identity providers; nil makes sign-in through them answer
	// Unavailable.
	Providers ProviderClient
	// SignUpAnswerTime is how long after the address lookup a sign-up under the required
	// verification policy answers at the earliest, so that a new address (its tenant over gRPC,
	// the user's and the challenge's rows, a mail) and a registered one (a mail) answer in the
	// same time. Zero: no wait (the use-case tests); the identity server sets
	// DefaultSignUpAnswerTime.
	SignUpAnswerTime time.Duration
	// After replaces time.After in that wait (tests observe it); nil: time.After.
	After func(time.Duration) <-chan time.Time
	// AppEnabledChanged is called after an app was enabled or disabled, so that this process's
	// cache of verified API keys forgets the app at once instead of when the event comes back
	// from the bus (other replicas forget it then). nil: nothing to tell.
	AppEnabledChanged func(appID string)
}

// Service implements the identity use cases. It is safe for concurrent use.
//
// Every use case takes the caller's app (from the admitted Principal) where the contract scopes by
// app, and answers "not found" for anything of another app. Ids from callers are canonicalised
// (domain.CanonicalID) on entry, so stores compare them as plain strings.
type Service struct {
	store     Store
	pepper    []byte
	box       *sealbox.Box
	clock     func() time.Time
	tenants   Tenants
	issuer    string
	publicURL string
	passwords PasswordHasher
	hashes    *hashGate
	limits    LoginLimits
	mailer    mail.Sender
	enabled   func(appID string)
	providers ProviderClient
	answerAt  time.Duration
	after     func(time.Duration) <-chan time.Time

	opMu  sync.Mutex
	opKey *rsa.PrivateKey // the operator signing key once loaded (see operatorKey)

	appKeys sync.Map // app id -> openedKey: apps' signing keys as last opened (see signingKey)
}

// New checks the configuration and returns the use cases.
func New(c Config) (*Service, error) {
	switch {
	case c.Store == nil:
		return nil, errors.New("identity: store is required")
	case len(c.Pepper) == 0:
		return nil, errors.New("identity: API-key pepper is required")
	case c.Box == nil:
		return nil, errors.New("identity: key sealing box is required")
	}
	clock := c.Clock
	if clock == nil {
		clock = time.Now
	}
	issuer := c.Issuer
	if issuer == "" {
		issuer = DefaultIssuer
	}
	limits := c.Limits.withDefaults()
	if !limits.valid() {
		return nil, errors.New("identity: attempt limits must be positive")
	}
	hasher := c.Hasher
	if hasher == nil {
		h, err := password.NewHasher(c.Passwords)
		if err != nil {
			return nil, err
		}
		hasher = h
	}
	concurrency, wait := c.HashConcurrency, c.HashWait
	if concurrency == 0 {
		concurrency = DefaultHashConcurrency(c.Passwords)
	}
	if wait == 0 {
		wait = DefaultHashWait
	}
	if concurrency < 0 || wait < 0 {
		return nil, errors.New("identity: password hash concurrency and wait must be positive")
	}
	if c.SignUpAnswerTime < 0 {
		return nil, errors.New("identity: the sign-up answer time must not be negative")
	}
	after := c.After
	if after == nil {
		after = time.After
	}
	enabled := c.AppEnabledChanged
	if enabled == nil {
		enabled = func(string) {}
	}
	return &Service{
		enabled: enabled, store: c.Store, pepper: c.Pepper, box: c.Box, clock: clock, tenants: c.Tenants, issuer: issuer,
		publicURL: strings.TrimSuffix(c.PublicURL, "/"), passwords: hasher, hashes: newHashGate(concurrency, wait), limits: limits, mailer: c.Mailer,
		providers: c.Providers, answerAt: c.SignUpAnswerTime, after: after,
	}, nil
}

// now is cut to microseconds, the precision PostgreSQL keeps, so a value reads back as written.
func (s *Service) now() time.Time { return s.clock().UTC().Truncate(time.Microsecond) }

// event builds one outbox event with this service as its source. The types it emits are declared
// beside their payloads in proto/identity/v1/events.proto (identityv1.Event*).
func event(eventType eventsv1.Type, appID string, payload proto.Message) ([]events.Event, error) {
	ev, err := events.New(Source, eventType, appID, payload)
	if err != nil {
		return nil, err
	}
	return []events.Event{ev}, nil
}

// ownApp answers "not found" for an app other than the caller's, exactly as for an absent one.
func ownApp(callerApp, appID string) error {
	if appID == "" || appID != callerApp {
		return domain.NotFound("app")
	}
	return nil
}
