package domain

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/berthhq/berth/pkg/fault"
)

// Provider is a payment provider.
type Provider string

// The providers Berth connects.
const (
	Pspx Provider = "pspx"
	Pspy Provider = "pspy"
)

// Connection is an app's account at a provider. Keys and webhook secrets are stored sealed (the
// app layer seals and opens them); nothing here ever holds them in clear.
type Connection struct {
	ID             string
	AppID          string
	Provider       Provider
	TestKey        []byte // sealed secret key for test mode; nil when not set
	LiveKey        []byte // sealed secret key for live mode
	WebhookSecrets []WebhookSecret
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// WebhookSecret is a sealed pspx webhook signing secret. Several may be active while the provider
// rotates one.
type WebhookSecret struct {
	ID        string
	Test      bool
	Sealed    []byte
	CreatedAt time.Time
}

// Key formats the providers issue: test and live keys are told apart by their prefix, so a live
// key stored as a test key (or a key of the other provider) is refused before it moves money.
var keyPatterns = map[Provider]map[bool]*regexp.Regexp{
	Pspx: {true: regexp.MustCompile(`^sk_test_[A-Za-z0-9]{8,247}$`), false: regexp.MustCompile(`^sk_live_[A-Za-z0-9]{8,247}$`)},
	Pspy: {true: regexp.MustCompile(`^test_[A-Za-z0-9]{20,250}$`), false: regexp.MustCompile(`^live_[A-Za-z0-9]{20,250}$`)},
}

var webhookSecretPattern = regexp.MustCompile(`^whsec_[A-Za-z0-9]{16,250}$`)

// ParseProvider reads a provider name.
func ParseProvider(s string) (Provider, error) {
	switch p := Provider(s); p {
	case Pspx, Pspy:
		return p, nil
	}
	return "", fault.InvalidField("provider", "must be pspx or pspy")
}

// CheckKey validates a secret key for the provider and mode; "" is allowed (not set).
func CheckKey(p Provider, test bool, key string) error {
	if key == "" || keyPatterns[p][test].MatchString(key) {
		return nil
	}
	field, want := "liveSecretKey", "a live"
	if test {
		field, want = "testSecretKey", "a test"
	}
	return fault.InvalidField(field, "must be %s secret key of %s", want, p)
}

// CheckWebhookSecret validates a pspx webhook signing secret; "" is allowed. pspy signs nothing.
func CheckWebhookSecret(p Provider, field, secret string) error {
	switch {
	case secret == "":
		return nil
	case p != Pspx:
		return fault.InvalidField(field, "only pspx connections have webhook signing secrets")
	case !webhookSecretPattern.MatchString(secret):
		return fault.InvalidField(field, "must be a pspx webhook signing secret (whsec_...)")
	}
	return nil
}

// Settings are an app's billing settings.
type Settings struct {
	AppID                   string
	ConnectionID            string // the connection checkouts use; "" before the first one
	PaymentReturnURL        string // "" = the app's first redirect URI
	FailedPaymentsToFreeze  int32
	OneTimePaymentValidDays int32
	ReferralPromotionID     string
	// RenewalLineDescription is what a subscription's renewal invoice lines say (see RenewalLine);
	// "" leaves the provider's own description.
	RenewalLineDescription string
}

// DefaultSettings are an app's settings before an operator changes any.
func DefaultSettings(appID string) Settings {
	return Settings{AppID: appID, FailedPaymentsToFreeze: 3, OneTimePaymentValidDays: 365}
}

// SettingsPatch changes settings; nil fields stay.
type SettingsPatch struct {
	ConnectionID            *string
	PaymentReturnURL        *string
	FailedPaymentsToFreeze  *int32
	OneTimePaymentValidDays *int32
	ReferralPromotionID     *string
	RenewalLineDescription  *string
}

// maxLineDescription bounds a renewal line description (the provider's own limit is larger).
const maxLineDescription = 500

// Apply validates p and applies it to s. Whether the named connection and promotion exist is the
// caller's check (it needs the store).
func (p SettingsPatch) Apply(s *Settings) error {
	if p.PaymentReturnURL != nil && *p.PaymentReturnURL != "" {
		u, err := url.Parse(*p.PaymentReturnURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" || len(*p.PaymentReturnURL) > 2000 {
			return fault.InvalidField("paymentReturnUrl", "must be an absolute http(s) URL without a fragment")
		}
	}
	if p.FailedPaymentsToFreeze != nil && (*p.FailedPaymentsToFreeze < 1 || *p.FailedPaymentsToFreeze > 100) {
		return fault.InvalidField("failedPaymentsToFreeze", "must be between 1 and 100")
	}
	if p.OneTimePaymentValidDays != nil && (*p.OneTimePaymentValidDays < 1 || *p.OneTimePaymentValidDays > 3660) {
		return fault.InvalidField("oneTimePaymentValidDays", "must be between 1 and 3660")
	}
	if p.RenewalLineDescription != nil && utf8.RuneCountInString(*p.RenewalLineDescription) > maxLineDescription {
		return fault.InvalidField("renewalLineDescription", "must be at most %d characters", maxLineDescription)
	}
	set(&s.ConnectionID, p.ConnectionID)
	set(&s.PaymentReturnURL, p.PaymentReturnURL)
	set(&s.FailedPaymentsToFreeze, p.FailedPaymentsToFreeze)
	set(&s.OneTimePaymentValidDays, p.OneTimePaymentValidDays)
	set(&s.ReferralPromotionID, p.ReferralPromotionID)
	set(&s.RenewalLineDescription, p.RenewalLineDescription)
	return nil
}

// RenewalLine is the description of a renewal line paying quantity for [start, end): the app's
// text with {quantity}, {start} and {end} (YYYY-MM-DD, UTC) filled in; "" when the app has none.
func (s Settings) RenewalLine(quantity int64, start, end time.Time) string {
	if s.RenewalLineDescription == "" {
		return ""
	}
	return strings.NewReplacer("{quantity}", strconv.FormatInt(quantity, 10),
		"{start}", start.UTC().Format(time.DateOnly), "{end}", end.UTC().Format(time.DateOnly)).Replace(s.RenewalLineDescription)
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
