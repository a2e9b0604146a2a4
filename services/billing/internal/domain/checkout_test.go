package domain

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/fault"
)

func TestCheckoutRequestValidation(t *testing.T) {
	valid := CheckoutRequest{Price: "price_1", Mode: ModePayment, Quantity: 1, PaymentMethodType: "card",
		AllowedCountry: "DE", State: strings.Repeat("a", 64)}
	cases := []struct {
		name   string
		change func(*CheckoutRequest)
		field  string
	}{
		{"valid", func(*CheckoutRequest) {}, ""},
		{"setup needs no price", func(r *CheckoutRequest) { r.Mode, r.Price, r.Quantity = ModeSetup, "", 0 }, ""},
		{"state of 63 characters", func(r *CheckoutRequest) { r.State = strings.Repeat("a", 63) }, "state"},
		{"state with a space", func(r *CheckoutRequest) { r.State = strings.Repeat("a", 63) + " " }, "state"},
		{"unknown mode", func(r *CheckoutRequest) { r.Mode = "trial" }, "mode"},
		{"zero quantity", func(r *CheckoutRequest) { r.Quantity = 0 }, "quantity"},
		{"lower-case country", func(r *CheckoutRequest) { r.AllowedCountry = "de" }, "allowedCountry"},
		{"three-letter country", func(r *CheckoutRequest) { r.AllowedCountry = "DEU" }, "allowedCountry"},
		{"sofort is discontinued", func(r *CheckoutRequest) { r.PaymentMethodType = "sofort" }, "paymentMethodType"},
		{"unknown payment method", func(r *CheckoutRequest) { r.PaymentMethodType = "cash" }, "paymentMethodType"},
		{"payment without price", func(r *CheckoutRequest) { r.Price = "" }, "price"},
		{"price with a slash", func(r *CheckoutRequest) { r.Price = "price/1" }, "price"},
		{"tax rate with a space", func(r *CheckoutRequest) { r.TaxRate = "txr 1" }, "taxRate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := valid
			c.change(&r)
			err := r.Validate()
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			f, ok := fault.As(err)
			if !ok || f.Field() != c.field {
				t.Fatalf("err %v, want an invalid %s", err, c.field)
			}
		})
	}
}

func TestCheckoutSessionOpensOnlyWithItsHashAndState(t *testing.T) {
	state := strings.Repeat("s", 64)
	c := CheckoutSession{Hash: strings.Repeat("ab", 32), StateHash: HashState(state)}
	if !c.Opens(c.Hash, state) {
		t.Fatal("the right hash and state do not open the session")
	}
	if c.Opens(c.Hash, strings.Repeat("t", 64)) || c.Opens(strings.Repeat("cd", 32), state) || c.Opens("", "") {
		t.Fatal("a wrong hash or state opens the session")
	}
}
