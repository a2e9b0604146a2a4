package domain

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
)

// Promotion is a code an app's operators hand out: redeeming it gives the redeeming user's tenant
// free units and free days (route 24), once per tenant.
type Promotion struct {
	ID             string
	AppID          string
	Code           string // canonical: upper case
	Name           string
	Description    string
	FreeUnits      int32
	FreeDays       int32
	ValidFrom      time.Time // zero: valid from creation
	ValidUntil     time.Time // zero: no end
	MaxRedemptions int32     // 0: unlimited
	Redemptions    int32
	Active         bool
	CreatedAt      time.Time
}

// NewPromotion is what an operator gives to create a promotion.
type NewPromotion struct {
	AppID          string
	Code           string
	Name           string
	Description    string
	FreeUnits      int32
	FreeDays       int32
	ValidFrom      time.Time
	ValidUntil     time.Time
	MaxRedemptions int32
}

var codePattern = regexp.MustCompile(`^[A-Z0-9][A-Z0-9_-]{2,63}$`)

// CanonicalCode is the form codes are stored and looked up in: people type codes in any case.
func CanonicalCode(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// CreatePromotion validates n and returns the active promotion with id.
func CreatePromotion(n NewPromotion, id string, now time.Time) (Promotion, error) {
	p := Promotion{
		ID: id, AppID: n.AppID, Code: CanonicalCode(n.Code), Name: n.Name, Description: n.Description,
		FreeUnits: n.FreeUnits, FreeDays: n.FreeDays, ValidFrom: n.ValidFrom.UTC(), ValidUntil: n.ValidUntil.UTC(),
		MaxRedemptions: n.MaxRedemptions, Active: true, CreatedAt: now.UTC(),
	}
	if n.ValidFrom.IsZero() {
		p.ValidFrom = time.Time{}
	}
	if n.ValidUntil.IsZero() {
		p.ValidUntil = time.Time{}
	}
	switch {
	case !codePattern.MatchString(p.Code):
		return Promotion{}, fault.InvalidField("code", "must be 3 to 64 letters, digits, '-' or '_', starting with a letter or digit")
	case strings.TrimSpace(p.Name) == "" || utf8.RuneCountInString(p.Name) > 200:
		return Promotion{}, fault.InvalidField("name", "must be 1 to 200 characters")
	case utf8.RuneCountInString(p.Description) > 2000:
		return Promotion{}, fault.InvalidField("description", "must be at most 2000 characters")
	case p.FreeUnits < 0 || p.FreeUnits > 1_000_000:
		return Promotion{}, fault.InvalidField("freeUnits", "must be between 0 and 1000000")
	case p.FreeDays < 0 || p.FreeDays > 3660:
		return Promotion{}, fault.InvalidField("freeDays", "must be between 0 and 3660")
	case p.FreeUnits == 0 && p.FreeDays == 0:
		return Promotion{}, fault.InvalidField("freeUnits", "a promotion must give free units or free days")
	case p.MaxRedemptions < 0:
		return Promotion{}, fault.InvalidField("maxRedemptions", "must not be negative (0 means unlimited)")
	case !p.ValidFrom.IsZero() && !p.ValidUntil.IsZero() && !p.ValidUntil.After(p.ValidFrom):
		return Promotion{}, fault.InvalidField("validUntil", "must be after validFrom")
	}
	return p, nil
}

// ErrUnknownCode answers every code that cannot be redeemed by this tenant, whatever the reason
// (unknown, inactive, not yet or no longer valid, exhausted, already redeemed): the caller learns
// that the code did not apply, not which codes exist.
var ErrUnknownCode = fault.InvalidField("promotionCode", "is unknown, no longer valid or already redeemed")

// Redeem applies the promotion to a tenant's account at now: free units added, free days added
// from the later of now and the current free period's end, and the promotion as the tenant's
// payment method when it has no paid plan. The promotion counts the redemption. The store makes
// sure a tenant redeems a promotion once and that concurrent redemptions see each other.
func (p *Promotion) Redeem(a *Account, now time.Time) error {
	now = now.UTC()
	switch {
	case !p.Active,
		!p.ValidFrom.IsZero() && now.Before(p.ValidFrom),
		!p.ValidUntil.IsZero() && !now.Before(p.ValidUntil),
		p.MaxRedemptions > 0 && p.Redemptions >= p.MaxRedemptions:
		return ErrUnknownCode
	}
	p.Redemptions++
	s := &a.State
	s.FreeUnits += int64(p.FreeUnits)
	if p.FreeDays > 0 {
		from := now
		if s.FreeUntil.After(from) {
			from = s.FreeUntil
		}
		s.FreeUntil = from.AddDate(0, 0, int(p.FreeDays))
	}
	if !s.HasPaidPlan() {
		s.PspxPaymentMethod = PromoPaymentMethod
	}
	a.Touch(now)
	return nil
}

// PromotionLimits is an operator's change of how often and when a promotion may be redeemed; nil
// fields keep their value, a zero time removes its bound. What a promotion grants is not a limit:
// it stays as its redemptions received it.
type PromotionLimits struct {
	MaxRedemptions *int32
	ValidFrom      *time.Time
	ValidUntil     *time.Time
}

// EditLimits applies l. A maximum below the uses already made is refused rather than clamped:
// those uses stand, and a maximum that pretends otherwise would say the promotion is overdrawn.
func (p *Promotion) EditLimits(l PromotionLimits) error {
	if l.MaxRedemptions == nil && l.ValidFrom == nil && l.ValidUntil == nil {
		return fault.InvalidField("maxRedemptions", "name at least one limit to change (maxRedemptions, validFrom, validUntil)")
	}
	next := *p
	if l.MaxRedemptions != nil {
		next.MaxRedemptions = *l.MaxRedemptions
	}
	if l.ValidFrom != nil {
		next.ValidFrom = l.ValidFrom.UTC()
	}
	if l.ValidUntil != nil {
		next.ValidUntil = l.ValidUntil.UTC()
	}
	switch {
	case next.MaxRedemptions < 0:
		return fault.InvalidField("maxRedemptions", "must not be negative (0 means unlimited)")
	case next.MaxRedemptions > 0 && next.MaxRedemptions < next.Redemptions:
		return fault.InvalidField("maxRedemptions", "must be 0 (unlimited) or at least the %d redemptions already made", next.Redemptions)
	case !next.ValidFrom.IsZero() && !next.ValidUntil.IsZero() && !next.ValidUntil.After(next.ValidFrom):
		return fault.InvalidField("validUntil", "must be after validFrom")
	}
	*p = next
	return nil
}

// UseKind says how a promotion was used.
type UseKind int

const (
	// UseRedemption is a tenant's redemption of the code (route 24).
	UseRedemption UseKind = iota
	// UseReferralReward is the promotion granted to a referrer's tenant because a referred tenant
	// first paid.
	UseReferralReward
)

func (k UseKind) String() string {
	if k == UseReferralReward {
		return "referralReward"
	}
	return "redemption"
}

// PromotionUse is the record of one use of a promotion, with what it granted.
type PromotionUse struct {
	Kind        UseKind
	PromotionID string
	Code        string
	// TenantID received the grant; UserID redeemed it, or is the referrer.
	TenantID string
	UserID   string
	// ReferredTenantID is the tenant whose first payment earned a referral reward.
	ReferredTenantID string
	FreeUnits        int32
	FreeDays         int32
	At               time.Time
}

// Key tells a promotion's uses apart: a tenant redeems a promotion once, and a referred tenant
// earns one reward.
func (u PromotionUse) Key() string {
	if u.Kind == UseReferralReward {
		return u.ReferredTenantID
	}
	return u.TenantID
}

// UseCursor is a position in a promotion's uses, newest first: the uses after it are those
// ordered before it by (At, Kind, Key).
type UseCursor struct {
	At   time.Time
	Kind UseKind
	Key  string
}

// CursorOf is the position of u.
func CursorOf(u PromotionUse) UseCursor { return UseCursor{At: u.At, Kind: u.Kind, Key: u.Key()} }

// Before says whether u comes after c in a newest-first page.
func (c UseCursor) Before(u PromotionUse) bool {
	switch {
	case !u.At.Equal(c.At):
		return u.At.Before(c.At)
	case u.Kind != c.Kind:
		return u.Kind < c.Kind
	default:
		return u.Key() < c.Key
	}
}

// ErrBadCursor refuses a cursor that no page handed out.
var ErrBadCursor = fault.InvalidField("cursor", "is not a cursor of this list")

// Encode is the cursor as clients pass it back: opaque, URL-safe.
func (c UseCursor) Encode() string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d|%d|%s", c.At.UnixMicro(), c.Kind, c.Key))
}

// DecodeUseCursor reads Encode's form.
func DecodeUseCursor(s string) (UseCursor, error) {
	if len(s) > 200 {
		return UseCursor{}, ErrBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return UseCursor{}, ErrBadCursor
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != 3 {
		return UseCursor{}, ErrBadCursor
	}
	micros, err1 := strconv.ParseInt(parts[0], 10, 64)
	kind, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || (kind != int(UseRedemption) && kind != int(UseReferralReward)) || !isCanonicalUUID(parts[2]) {
		return UseCursor{}, ErrBadCursor
	}
	return UseCursor{At: time.UnixMicro(micros).UTC(), Kind: UseKind(kind), Key: parts[2]}, nil
}

// isCanonicalUUID accepts the lower-case 36-character form ids are stored in.
func isCanonicalUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36 && s == strings.ToLower(s)
}
