package domain

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/text"
)

// MaxTextLen bounds every free-text field a caller may set.
const MaxTextLen = 256

// Tax-exemption values of companyTaxExempt.
var taxExemptValues = []string{"none", "exempt", "reverse"}

// AddressPatch holds the address fields route 17 may change; nil leaves a field as it is.
type AddressPatch struct {
	Name       *string
	City       *string
	Country    *string
	Line1      *string
	Line2      *string
	PostalCode *string
	State      *string
}

// Patch holds the tenant fields route 17 may change; nil leaves a field as it is. It deliberately
// has no billing fields.
type Patch struct {
	Name                        *string
	PspxOneTimePaymentValidThru *string
	Description                 *string
	CompanyName                 *string
	CompanyVATID                *string
	CompanyTaxType              *string
	CompanyTaxExempt            *string
	IsBusinessCustomer          *bool
	IsInvoicePending            *bool
	ShippingAddress             *AddressPatch
	BillingAddress              *AddressPatch
}

// ServerOnlyFields names the set fields that only the app's server (a write API key) may change:
// they decide payment and tax state, which an end user must not set for themselves. The names
// carry prefix, as in Validate.
func (p Patch) ServerOnlyFields(prefix string) []string {
	var out []string
	if p.PspxOneTimePaymentValidThru != nil {
		out = append(out, prefix+"pspxOneTimePaymentValidThru")
	}
	if p.IsInvoicePending != nil {
		out = append(out, prefix+"isInvoicePending")
	}
	if p.CompanyTaxExempt != nil {
		out = append(out, prefix+"companyTaxExempt")
	}
	return out
}

// UpdateBody is route 17's body as sent. Clients send either the flat form (fields at the top,
// usually with kind "tenant") or the nested form (fields under `tenant`, as in the documented
// sample); when Nested is present it is the patch and the flat fields are ignored.
type UpdateBody struct {
	Kind   *string
	Patch  Patch
	Nested *UpdateBody
}

// Prefix is how the effective patch's fields are named to the caller: "tenant." in the nested
// form, "" in the flat one.
func (b UpdateBody) Prefix() string {
	if b.Nested != nil {
		return "tenant."
	}
	return ""
}

// Effective validates the body and returns the patch it asks for.
func (b UpdateBody) Effective() (Patch, error) {
	if err := checkKind(b.Kind, "kind"); err != nil {
		return Patch{}, err
	}
	if b.Nested == nil {
		return b.Patch, b.Patch.Validate("")
	}
	if err := checkKind(b.Nested.Kind, "tenant.kind"); err != nil {
		return Patch{}, err
	}
	return b.Nested.Patch, b.Nested.Patch.Validate("tenant.")
}

func checkKind(kind *string, field string) error {
	if kind != nil && *kind != "tenant" {
		return fault.InvalidField(field, `must be "tenant"`)
	}
	return nil
}

// Validate checks every field that is set; prefix is prepended to field names in errors. Values
// are checked as sent: a country in lower case is valid and is stored upper-cased by Apply.
func (p Patch) Validate(prefix string) error {
	for _, f := range p.texts() {
		if err := checkText(prefix+f.name, f.v, f.rule); err != nil {
			return err
		}
	}
	// A tenant is always shown by its name, so a patch may rename it but not blank it.
	if p.Name != nil && strings.TrimSpace(*p.Name) == "" {
		return fault.InvalidField(prefix+"name", "must not be empty")
	}
	if v := p.PspxOneTimePaymentValidThru; v != nil && *v != "" {
		if _, err := normalizeDate(*v); err != nil {
			return fault.InvalidField(prefix+"pspxOneTimePaymentValidThru", "must be a date (YYYY-MM-DD) or an RFC 3339 date-time")
		}
	}
	if v := p.CompanyTaxExempt; v != nil && !slices.Contains(taxExemptValues, *v) {
		return fault.InvalidField(prefix+"companyTaxExempt", "must be one of %s", strings.Join(taxExemptValues, ", "))
	}
	if err := p.ShippingAddress.validate(prefix + "shippingAddress."); err != nil {
		return err
	}
	return p.BillingAddress.validate(prefix + "billingAddress.")
}

// textField is a patchable text field with its rule (pkg/text).
type textField struct {
	name string
	v    *string
	rule text.Rule
}

// texts lists the patch's own text fields. Only the description is free text that may span lines
// (tab, line feed, carriage return), as TenantPatch.description declares in proto; every other
// field is single-line. Address lines are separate fields, so no address field spans lines.
func (p Patch) texts() []textField {
	return []textField{
		{"name", p.Name, text.SingleLine},
		{"pspxOneTimePaymentValidThru", p.PspxOneTimePaymentValidThru, text.SingleLine},
		{"description", p.Description, text.MultiLine},
		{"companyName", p.CompanyName, text.SingleLine},
		{"companyVATId", p.CompanyVATID, text.SingleLine},
		{"companyTaxType", p.CompanyTaxType, text.SingleLine},
		{"companyTaxExempt", p.CompanyTaxExempt, text.SingleLine},
	}
}

func (a *AddressPatch) validate(prefix string) error {
	if a == nil {
		return nil
	}
	for _, f := range a.fields() {
		if err := checkText(prefix+f.name, f.v, text.SingleLine); err != nil {
			return err
		}
	}
	if a.Country != nil && *a.Country != "" && !isCountryCode(*a.Country) {
		return fault.InvalidField(prefix+"country", "must be a 2-letter country code")
	}
	return nil
}

type addressField struct {
	name string
	v    *string
	dst  func(*Address) *string
}

// fields lists the patchable address fields once, for validation and for applying.
func (a *AddressPatch) fields() []addressField {
	return []addressField{
		{"name", a.Name, func(x *Address) *string { return &x.Name }},
		{"city", a.City, func(x *Address) *string { return &x.City }},
		{"country", a.Country, func(x *Address) *string { return &x.Country }},
		{"line1", a.Line1, func(x *Address) *string { return &x.Line1 }},
		{"line2", a.Line2, func(x *Address) *string { return &x.Line2 }},
		{"postal_code", a.PostalCode, func(x *Address) *string { return &x.PostalCode }},
		{"state", a.State, func(x *Address) *string { return &x.State }},
	}
}

func (a *AddressPatch) empty() bool {
	for _, f := range a.fields() {
		if f.v != nil {
			return false
		}
	}
	return true
}

// Apply changes t as a validated patch asks and returns the names of the fields whose value
// changed (an address created by the patch is reported as e.g. "shippingAddress"). A patch that
// changes nothing returns nil and leaves UpdatedAt alone. newID mints the id of a new address.
func (t *Tenant) Apply(p Patch, now time.Time, newID func() string) []string {
	var changed []string
	setText := func(name string, dst *string, v *string) {
		if v != nil && *dst != *v {
			*dst = *v
			changed = append(changed, name)
		}
	}
	setBool := func(name string, dst *bool, v *bool) {
		if v != nil && *dst != *v {
			*dst = *v
			changed = append(changed, name)
		}
	}
	setText("name", &t.Name, p.Name)
	if v := p.PspxOneTimePaymentValidThru; v != nil {
		norm, _ := normalizeDate(*v) // validated; "" stays "" and clears the field
		setText("pspxOneTimePaymentValidThru", &t.PspxOneTimePaymentValidThru, &norm)
	}
	setText("description", &t.Description, p.Description)
	setText("companyName", &t.CompanyName, p.CompanyName)
	setText("companyVATId", &t.CompanyVATID, p.CompanyVATID)
	setText("companyTaxType", &t.CompanyTaxType, p.CompanyTaxType)
	setText("companyTaxExempt", &t.CompanyTaxExempt, p.CompanyTaxExempt)
	setBool("isBusinessCustomer", &t.IsBusinessCustomer, p.IsBusinessCustomer)
	setBool("isInvoicePending", &t.IsInvoicePending, p.IsInvoicePending)
	changed = append(changed, applyAddress(&t.ShippingAddress, AddressShipping, "shippingAddress", p.ShippingAddress, newID)...)
	changed = append(changed, applyAddress(&t.BillingAddress, AddressBilling, "billingAddress", p.BillingAddress, newID)...)
	if len(changed) > 0 {
		t.UpdatedAt = now.UTC()
	}
	return changed
}

// applyAddress creates the address on its first patch that sets any field.
func applyAddress(slot **Address, typ, name string, p *AddressPatch, newID func() string) []string {
	if p == nil || p.empty() {
		return nil
	}
	var changed []string
	if *slot == nil {
		*slot = &Address{ID: newID(), Type: typ}
		changed = append(changed, name)
	}
	for _, f := range p.fields() {
		if f.v == nil {
			continue
		}
		v := *f.v
		if f.name == "country" {
			v = strings.ToUpper(v)
		}
		if dst := f.dst(*slot); *dst != v {
			*dst = v
			changed = append(changed, name+"."+f.name)
		}
	}
	return changed
}

// checkText holds a set field to the shared text rule (the same one identity applies: no invalid
// UTF-8, NUL or control characters beyond what rule allows) and to MaxTextLen.
func checkText(field string, v *string, rule text.Rule) error {
	if v == nil {
		return nil
	}
	if err := rule.Check(field, *v); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(*v); n > MaxTextLen {
		return fault.InvalidField(field, "must be at most %d characters", MaxTextLen)
	}
	return nil
}

// normalizeDate accepts a date (kept as YYYY-MM-DD) or an RFC 3339 date-time (stored in UTC), the
// two forms the published clients send.
func normalizeDate(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return d.Format(time.DateOnly), nil
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "", err
	}
	return ts.UTC().Format(time.RFC3339Nano), nil
}

func isCountryCode(s string) bool {
	if len(s) != 2 {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') {
			return false
		}
	}
	return true
}
