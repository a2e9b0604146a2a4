package domain

import (
	"errors"
	"github.com/berthhq/berth/pkg/fault"
	"time"
)

// ErrNotFound is returned for a tenant that does not exist or belongs to another app; callers
// cannot tell the two apart, so tenant ids of other apps cannot be probed.
var ErrNotFound = fault.NotFound("Tenant not found")

// ErrExists is returned when a tenant id is already taken. Ids are random UUIDs, so a collision is
// Berth's fault, never the caller's.
var ErrExists = fault.Internal(errors.New("tenant already exists"))

// Address types, as rendered in the address's `type` field.
const (
	AddressShipping = "shipping"
	AddressBilling  = "billing"
)

// Address is a tenant's shipping or billing address.
type Address struct {
	ID         string
	Type       string // AddressShipping or AddressBilling
	Name       string
	City       string
	Country    string // ISO 3166-1 alpha-2, upper case, or ""
	Line1      string
	Line2      string
	PostalCode string
	State      string
	Deleted    bool
}

// Billing is the tenant's billing state. Route 17 cannot change any of it; billing events do.
type Billing struct {
	PspxCustomerID                    string
	PspxPriceID                       string
	PspxProductID                     string
	PspxSubscriptionID                string
	PspxTrialingPriceID               string
	PspxTrialingProductID             string
	PspxTrialingSubscriptionID        string
	PspxCheckoutSessionID             string
	PspxDefaultPaymentMethodID        string
	PspxSubscriptionCancelAtPeriodEnd bool
	PspxSubscriptionCancelAt          string
	PspxPaymentMethod                 string
	Mode                              string // "payment", "subscription" or "" before the first checkout
	FreezedDueFailedPayment           bool
	PaidUntil                         string
	FreeUntil                         string
	PaidUnits                         string // a decimal count; the contract renders it as text
	FreeUnits                         string
	Freezed                           bool
	PaymentFailed                     bool
	PaymentFailedCount                int32
	PaymentFailedDate                 string
}

// Tenant is a billing account of an app.
type Tenant struct {
	ID          string
	AppID       string
	Name        string
	Description string

	PspxOneTimePaymentValidThru string
	CompanyName                 string
	CompanyVATID                string
	CompanyTaxType              string
	CompanyTaxExempt            string // "", "none", "exempt" or "reverse"
	IsBusinessCustomer          bool
	IsInvoicePending            bool
	Deleted                     bool

	Billing Billing
	// BillingRevision is the billing context's revision of Billing: billing counts its changes,
	// and an older or repeated state never replaces a newer one.
	BillingRevision int64

	ShippingAddress *Address // nil until the first address patch or a create that carries one
	BillingAddress  *Address

	CreatedAt time.Time
	UpdatedAt time.Time
}

// Clone returns a copy that shares no addresses with t, so a caller may change it freely (stores
// hand clones to update functions and keep the original when the update fails).
func (t Tenant) Clone() Tenant {
	if t.ShippingAddress != nil {
		a := *t.ShippingAddress
		t.ShippingAddress = &a
	}
	if t.BillingAddress != nil {
		a := *t.BillingAddress
		t.BillingAddress = &a
	}
	return t
}

// NewTenant is what an operator gives to start a tenant. Its name, like a patched one, must not be blank.
type NewTenant struct {
	ID              string
	AppID           string
	Name            string
	Description     string
	ShippingAddress *AddressPatch
	BillingAddress  *AddressPatch
}

// Create validates n and returns the new tenant with the documented billing defaults: zero paid
// and free units, everything else empty. newID mints address ids.
func Create(n NewTenant, now time.Time, newID func() string) (Tenant, error) {
	appID, err := ParseID("appId", n.AppID)
	if err != nil {
		return Tenant{}, err
	}
	p := Patch{Name: &n.Name, Description: &n.Description, ShippingAddress: n.ShippingAddress, BillingAddress: n.BillingAddress}
	if err := p.Validate(""); err != nil {
		return Tenant{}, err
	}
	now = now.UTC()
	t := Tenant{
		ID:        n.ID,
		AppID:     appID,
		Billing:   Billing{PaidUnits: "0", FreeUnits: "0"},
		CreatedAt: now,
		UpdatedAt: now,
	}
	t.Apply(p, now, newID)
	return t, nil
}

// MarkDeleted retires the tenant after its last user was deleted and returns the names of the
// fields that changed (nil when it was retired already, so a repeated event is a no-op). The row
// is kept, flagged deleted: billing history and provider ids still refer to it. A running pspx
// subscription is flagged to cancel at the end of the period already paid for rather than at once;
// only the flag is set here: the billing service (a later piece of work) will act on it at pspx.
func (t *Tenant) MarkDeleted(now time.Time) []string {
	var changed []string
	if !t.Deleted {
		t.Deleted = true
		changed = append(changed, "deleted")
	}
	if t.Billing.PspxSubscriptionID != "" && !t.Billing.PspxSubscriptionCancelAtPeriodEnd {
		t.Billing.PspxSubscriptionCancelAtPeriodEnd = true
		changed = append(changed, "pspxSubscriptionCancelAtPeriodEnd")
	}
	if len(changed) > 0 {
		t.UpdatedAt = now.UTC()
	}
	return changed
}

// ApplyBilling stores billing's state at revision rev when it is newer than the stored one and
// reports the changed tenant fields (nil when nothing is applied). validThru, when not empty, is
// the validity a one-time payment gave (the field route 17 may also set with a write key).
func (t *Tenant) ApplyBilling(rev int64, b Billing, validThru string, now time.Time) []string {
	if rev <= t.BillingRevision {
		return nil
	}
	changed := []string{"billing"}
	if validThru != "" && validThru != t.PspxOneTimePaymentValidThru {
		t.PspxOneTimePaymentValidThru = validThru
		changed = append(changed, "pspxOneTimePaymentValidThru")
	}
	t.Billing, t.BillingRevision, t.UpdatedAt = b, rev, now.UTC()
	return changed
}
