package domain

import (
	"github.com/berthhq/berth/pkg/fault"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

var (
	created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	later   = created.Add(time.Hour)
)

// sequentialIDs mints predictable address ids.
func sequentialIDs() func() string {
	n := 0
	return func() string {
		n++
		return "00000000-0000-4000-8000-00000000000" + string(rune('0'+n))
	}
}

// billedTenant has every billing field set, so a test can prove a patch leaves them alone.
func billedTenant() Tenant {
	return Tenant{
		ID: "11111111-1111-4111-8111-111111111111", AppID: "22222222-2222-4222-8222-222222222222",
		Name: "Acme", Description: "first",
		CompanyTaxExempt: "none",
		Billing: Billing{
			PspxCustomerID: "cus_1", PspxPriceID: "price_1", PspxProductID: "prod_1", PspxSubscriptionID: "sub_1",
			PspxTrialingPriceID: "tp", PspxTrialingProductID: "tpr", PspxTrialingSubscriptionID: "ts",
			PspxCheckoutSessionID: "cs", PspxDefaultPaymentMethodID: "pm", PspxSubscriptionCancelAtPeriodEnd: true,
			PspxSubscriptionCancelAt: "2026-05-01T00:00:00Z", PspxPaymentMethod: "card", Mode: "subscription",
			FreezedDueFailedPayment: true, PaidUntil: "2026-06-01", FreeUntil: "2026-02-01", PaidUnits: "5",
			FreeUnits: "2", Freezed: true, PaymentFailed: true, PaymentFailedCount: 3, PaymentFailedDate: "2026-03-01",
		},
		CreatedAt: created, UpdatedAt: created,
	}
}

func TestUpdateBodyValidationNamesTheFieldAsSent(t *testing.T) {
	long := strings.Repeat("é", MaxTextLen+1) // counted in characters, not bytes
	cases := []struct {
		name      string
		body      UpdateBody
		wantField string // "" = valid
	}{
		{"empty flat body", UpdateBody{}, ""},
		{"flat with kind tenant", UpdateBody{Kind: ptr("tenant"), Patch: Patch{Name: ptr("New")}}, ""},
		{"wrong kind", UpdateBody{Kind: ptr("user")}, "kind"},
		{"wrong nested kind", UpdateBody{Nested: &UpdateBody{Kind: ptr("tenants")}}, "tenant.kind"},
		{"flat tax exempt outside enum", UpdateBody{Patch: Patch{CompanyTaxExempt: ptr("partial")}}, "companyTaxExempt"},
		{"nested tax exempt outside enum", UpdateBody{Nested: &UpdateBody{Patch: Patch{CompanyTaxExempt: ptr("EXEMPT")}}}, "tenant.companyTaxExempt"},
		{"each tax exempt value", UpdateBody{Patch: Patch{CompanyTaxExempt: ptr("reverse")}}, ""},
		{"blank name", UpdateBody{Patch: Patch{Name: ptr("  ")}}, "name"},
		{"name at the limit", UpdateBody{Patch: Patch{Name: ptr(strings.Repeat("é", MaxTextLen))}}, ""},
		{"description over the limit", UpdateBody{Patch: Patch{Description: ptr(long)}}, "description"},
		{"VAT id over the limit", UpdateBody{Patch: Patch{CompanyVATID: ptr(long)}}, "companyVATId"},
		{"tax type over the limit", UpdateBody{Nested: &UpdateBody{Patch: Patch{CompanyTaxType: ptr(long)}}}, "tenant.companyTaxType"},
		{"valid thru as a date", UpdateBody{Patch: Patch{PspxOneTimePaymentValidThru: ptr("2026-12-31")}}, ""},
		{"valid thru as a date-time", UpdateBody{Patch: Patch{PspxOneTimePaymentValidThru: ptr("2026-12-31T10:00:00+02:00")}}, ""},
		{"valid thru cleared", UpdateBody{Patch: Patch{PspxOneTimePaymentValidThru: ptr("")}}, ""},
		{"valid thru not a date", UpdateBody{Patch: Patch{PspxOneTimePaymentValidThru: ptr("31.12.2026")}}, "pspxOneTimePaymentValidThru"},
		{"valid thru impossible date", UpdateBody{Patch: Patch{PspxOneTimePaymentValidThru: ptr("2026-02-30")}}, "pspxOneTimePaymentValidThru"},
		{"country lower case", UpdateBody{Patch: Patch{ShippingAddress: &AddressPatch{Country: ptr("de")}}}, ""},
		{"country of three letters", UpdateBody{Patch: Patch{ShippingAddress: &AddressPatch{Country: ptr("DEU")}}}, "shippingAddress.country"},
		{"country with digits", UpdateBody{Nested: &UpdateBody{Patch: Patch{BillingAddress: &AddressPatch{Country: ptr("D1")}}}}, "tenant.billingAddress.country"},
		{"postal code over the limit", UpdateBody{Patch: Patch{BillingAddress: &AddressPatch{PostalCode: ptr(long)}}}, "billingAddress.postal_code"},
		// The shared text rule (pkg/text), as identity applies it; only the description spans lines.
		{"NUL in the name", UpdateBody{Patch: Patch{Name: ptr("ACME\x00")}}, "name"},
		{"invalid UTF-8 in the company name", UpdateBody{Patch: Patch{CompanyName: ptr("AC\xffME")}}, "companyName"},
		{"escape sequence in the VAT id", UpdateBody{Nested: &UpdateBody{Patch: Patch{CompanyVATID: ptr("DE\x1b[2J")}}}, "tenant.companyVATId"},
		{"newline in the name", UpdateBody{Patch: Patch{Name: ptr("A\nB")}}, "name"},
		{"NUL in an address line", UpdateBody{Patch: Patch{ShippingAddress: &AddressPatch{Line1: ptr("Main St\x00")}}}, "shippingAddress.line1"},
		{"newline in an address line", UpdateBody{Patch: Patch{BillingAddress: &AddressPatch{Line2: ptr("a\nb")}}}, "billingAddress.line2"},
		{"lines in the description", UpdateBody{Patch: Patch{Description: ptr("one\r\ntwo\tthree")}}, ""},
		{"NUL in the description", UpdateBody{Patch: Patch{Description: ptr("one\x00")}}, "description"},
		{"escape in the description", UpdateBody{Patch: Patch{Description: ptr("one\n\x1b")}}, "description"},
		{"invalid flat fields are ignored when nested is sent", UpdateBody{
			Patch:  Patch{CompanyTaxExempt: ptr("bogus")},
			Nested: &UpdateBody{Patch: Patch{Name: ptr("ok")}},
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.body.Effective()
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("Effective() = %v, want valid", err)
				}
				return
			}
			f, ok := fault.As(err)
			if !ok || f.Kind() != fault.KindInvalid {
				t.Fatalf("Effective() = %v, want an Invalid fault", err)
			}
			if f.Field() != tc.wantField {
				t.Fatalf("field = %q, want %q", f.Field(), tc.wantField)
			}
		})
	}
}

func TestNestedBodyWinsOverFlatFields(t *testing.T) {
	body := UpdateBody{
		Kind:   ptr("tenant"),
		Patch:  Patch{Name: ptr("flat"), Description: ptr("flat description")},
		Nested: &UpdateBody{Patch: Patch{Name: ptr("nested")}},
	}
	p, err := body.Effective()
	if err != nil {
		t.Fatal(err)
	}
	tn := billedTenant()
	changed := tn.Apply(p, later, sequentialIDs())
	if tn.Name != "nested" || tn.Description != "first" {
		t.Fatalf("name, description = %q, %q; want the nested patch only", tn.Name, tn.Description)
	}
	if !reflect.DeepEqual(changed, []string{"name"}) {
		t.Fatalf("changed = %v", changed)
	}
}

func TestApplyChangesOnlyPatchedFields(t *testing.T) {
	cases := []struct {
		name    string
		patch   Patch
		check   func(t *testing.T, got Tenant)
		changed []string
	}{
		{
			name:    "no-op patch changes nothing and keeps updatedAt",
			patch:   Patch{Name: ptr("Acme"), CompanyTaxExempt: ptr("none"), IsBusinessCustomer: ptr(false)},
			changed: nil,
			check: func(t *testing.T, got Tenant) {
				if !got.UpdatedAt.Equal(created) {
					t.Errorf("updatedAt moved to %v", got.UpdatedAt)
				}
			},
		},
		{
			name: "every patchable field",
			patch: Patch{
				Name: ptr("Beta"), PspxOneTimePaymentValidThru: ptr("2026-12-31T10:00:00+02:00"), Description: ptr("d"),
				CompanyName: ptr("Beta GmbH"), CompanyVATID: ptr("DE123"), CompanyTaxType: ptr("eu_vat"),
				CompanyTaxExempt: ptr("reverse"), IsBusinessCustomer: ptr(true), IsInvoicePending: ptr(true),
			},
			changed: []string{"name", "pspxOneTimePaymentValidThru", "description", "companyName", "companyVATId",
				"companyTaxType", "companyTaxExempt", "isBusinessCustomer", "isInvoicePending"},
			check: func(t *testing.T, got Tenant) {
				if got.PspxOneTimePaymentValidThru != "2026-12-31T08:00:00Z" {
					t.Errorf("valid thru = %q, want it in UTC", got.PspxOneTimePaymentValidThru)
				}
				if got.CompanyVATID != "DE123" || got.CompanyTaxExempt != "reverse" || !got.IsInvoicePending {
					t.Errorf("company fields not applied: %+v", got)
				}
				if !got.UpdatedAt.Equal(later) {
					t.Errorf("updatedAt = %v, want %v", got.UpdatedAt, later)
				}
			},
		},
		{
			name:    "first address patch creates the address with its type and an upper-case country",
			patch:   Patch{ShippingAddress: &AddressPatch{City: ptr("Berlin"), Country: ptr("de")}},
			changed: []string{"shippingAddress", "shippingAddress.city", "shippingAddress.country"},
			check: func(t *testing.T, got Tenant) {
				a := got.ShippingAddress
				if a == nil || a.ID == "" || a.Type != AddressShipping || a.City != "Berlin" || a.Country != "DE" {
					t.Fatalf("shipping address = %+v", a)
				}
				if got.BillingAddress != nil {
					t.Errorf("billing address created without a patch: %+v", got.BillingAddress)
				}
			},
		},
		{
			name:    "an empty address object creates nothing",
			patch:   Patch{BillingAddress: &AddressPatch{}},
			changed: nil,
			check: func(t *testing.T, got Tenant) {
				if got.BillingAddress != nil {
					t.Errorf("billing address = %+v, want none", got.BillingAddress)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tn := billedTenant()
			before := tn.Billing
			changed := tn.Apply(tc.patch, later, sequentialIDs())
			if !reflect.DeepEqual(changed, tc.changed) {
				t.Fatalf("changed = %v, want %v", changed, tc.changed)
			}
			if tn.Billing != before {
				t.Fatalf("billing state changed:\n got %+v\nwant %+v", tn.Billing, before)
			}
			tc.check(t, tn)
		})
	}
}

func TestSecondAddressPatchKeepsIDAndUntouchedFields(t *testing.T) {
	tn := billedTenant()
	ids := sequentialIDs()
	tn.Apply(Patch{BillingAddress: &AddressPatch{City: ptr("Berlin"), Line1: ptr("Main St 1")}}, later, ids)
	id := tn.BillingAddress.ID
	changed := tn.Apply(Patch{BillingAddress: &AddressPatch{City: ptr("Hamburg"), Line1: ptr("Main St 1")}}, later, ids)
	if !reflect.DeepEqual(changed, []string{"billingAddress.city"}) {
		t.Fatalf("changed = %v", changed)
	}
	if a := tn.BillingAddress; a.ID != id || a.City != "Hamburg" || a.Line1 != "Main St 1" || a.Type != AddressBilling {
		t.Fatalf("billing address = %+v (first id %s)", a, id)
	}
}

func TestCreateSetsBillingDefaults(t *testing.T) {
	cases := []struct {
		name      string
		in        NewTenant
		wantField string
	}{
		{"valid with address", NewTenant{AppID: "22222222-2222-4222-8222-222222222222", Name: "Acme",
			BillingAddress: &AddressPatch{Country: ptr("fr")}}, ""},
		{"app id not a UUID", NewTenant{AppID: "app-1", Name: "Acme"}, "appId"},
		{"app id in braces", NewTenant{AppID: "{22222222-2222-4222-8222-222222222222}", Name: "Acme"}, "appId"},
		{"missing name", NewTenant{AppID: "22222222-2222-4222-8222-222222222222"}, "name"},
		{"bad address country", NewTenant{AppID: "22222222-2222-4222-8222-222222222222", Name: "Acme",
			ShippingAddress: &AddressPatch{Country: ptr("Germany")}}, "shippingAddress.country"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.ID = "11111111-1111-4111-8111-111111111111"
			got, err := Create(tc.in, created, sequentialIDs())
			if tc.wantField != "" {
				if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != tc.wantField {
					t.Fatalf("Create() error = %v, want field %q", err, tc.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Billing{PaidUnits: "0", FreeUnits: "0"}
			if got.Billing != want {
				t.Fatalf("billing = %+v, want %+v", got.Billing, want)
			}
			if got.BillingAddress == nil || got.BillingAddress.Country != "FR" || got.ShippingAddress != nil {
				t.Fatalf("addresses = %+v / %+v", got.ShippingAddress, got.BillingAddress)
			}
			if !got.CreatedAt.Equal(created) || !got.UpdatedAt.Equal(created) {
				t.Fatalf("timestamps = %v / %v", got.CreatedAt, got.UpdatedAt)
			}
		})
	}
}

func TestParseIDCanonicalisesCase(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"ABCDEF01-2345-4789-8BCD-EF0123456789", "abcdef01-2345-4789-8bcd-ef0123456789", true},
		{"abcdef01-2345-4789-8bcd-ef0123456789", "abcdef01-2345-4789-8bcd-ef0123456789", true},
		{"abcdef0123454789-8bcd-ef0123456789", "", false},
		{"abcdef01-2345-4789-8bcd-ef012345678g", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		got, err := ParseID("tenantId", tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseID(%q) = %q, %v; want %q, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestCloneSharesNoAddresses(t *testing.T) {
	tn := billedTenant()
	tn.ShippingAddress = &Address{ID: "a", City: "Berlin"}
	c := tn.Clone()
	c.ShippingAddress.City = "Paris"
	if tn.ShippingAddress.City != "Berlin" {
		t.Fatal("changing the clone's address changed the original")
	}
}
