package domain

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

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
