package app

import (
	"context"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// pspxCheckout creates a pspx checkout session for cs: the price (and tax rate) must exist at the
// provider and suit the mode. A reverse-charge sale carries no tax: the buyer accounts for it.
func (s *Service) pspxCheckout(ctx context.Context, key string, tenant TenantRef, req domain.CheckoutRequest, cs *domain.CheckoutSession) error {
	currency := "eur"
	if req.Price != "" {
		price, err := s.prices.price(ctx, cs.ConnectionID, key, req.Price, s.pspx)
		if err != nil {
			return err
		}
		switch {
		case !price.Active:
			return fault.InvalidField("price", "is not active at the provider")
		case req.Mode == domain.ModeSubscription && price.Type != "recurring":
			return fault.InvalidField("price", "must be a recurring price for a subscription")
		case req.Mode == domain.ModePayment && price.Type != "one_time":
			return fault.InvalidField("price", "must be a one-time price for a payment")
		}
		currency = price.Currency
	}
	taxRate := req.TaxRate
	if req.IsReverseCharge {
		taxRate = ""
	}
	if taxRate != "" {
		rate, err := s.prices.taxRate(ctx, cs.ConnectionID, key, taxRate, s.pspx)
		if err != nil {
			return err
		}
		if !rate.Active {
			return fault.InvalidField("taxRate", "is not active at the provider")
		}
	}
	meta := s.customerMetadata(cs.AppID, cs.TenantID)
	err := s.customer(ctx, cs, func(idem string) (string, error) {
		c, err := s.pspx.CreateCustomer(ctx, key, idem, PspxCustomerInput{Name: customerName(tenant), Metadata: meta})
		if err != nil {
			return "", providerFault(err, "create pspx customer")
		}
		return c.ID, nil
	})
	if err != nil {
		return err
	}
	methodType := "card"
	if req.PaymentMethodType == "sepa" {
		methodType = "sepa_debit"
	}
	in := PspxCheckoutInput{
		Customer: cs.CustomerID, Mode: req.Mode, Quantity: cs.Quantity, TaxRate: taxRate, PaymentMethodType: methodType,
		BillingAddressCollection: req.BillingAddressCollection, AllowedCountry: req.AllowedCountry,
		SuccessURL: s.returnPage(*cs), CancelURL: s.returnPage(*cs), ClientReferenceID: cs.TenantID,
		Metadata: tagged(meta, metaCheckout, cs.ID),
	}
	if req.Mode == domain.ModeSetup {
		in.Currency = currency
	} else {
		in.Price = req.Price
	}
	created, err := s.pspx.CreateCheckoutSession(ctx, key, "checkout-"+cs.ID, in)
	if err != nil {
		return providerFault(err, "create pspx checkout session")
	}
	cs.ProviderSessionID, cs.ProviderURL = created.ID, created.URL
	return nil
}

// pspxOutcome reads the provider's checkout session. Complete and paid (or needing no payment, a
// setup) settles by mode; complete but unpaid is an asynchronous payment (SEPA) that the provider's
// event settles later; expired is cancelled; open stays open.
func (s *Service) pspxOutcome(ctx context.Context, key string, cs domain.CheckoutSession) (outcome, error) {
	got, err := s.pspx.CheckoutSession(ctx, key, cs.ProviderSessionID)
	if err != nil {
		return outcome{}, providerFault(err, "fetch pspx checkout session")
	}
	switch {
	case got.Status == "expired":
		return outcome{status: domain.CheckoutCancelled}, nil
	case got.Status != "complete":
		return outcome{status: domain.CheckoutOpen}, nil
	case got.PaymentStatus == "unpaid":
		return outcome{status: domain.CheckoutPending}, nil
	}
	return s.pspxPaid(ctx, key, cs, got)
}

// pspxPaid is the effect of a completed pspx checkout session.
func (s *Service) pspxPaid(ctx context.Context, key string, cs domain.CheckoutSession, got PspxCheckoutSession) (outcome, error) {
	done := outcome{status: domain.CheckoutCompleted, paid: domain.Payment{Amount: got.AmountTotal, Currency: got.Currency}}
	switch cs.Mode {
	case domain.ModeSubscription:
		sub := got.Subscription
		if sub == nil {
			return outcome{}, fault.Internal(errIncomplete("pspx checkout session " + got.ID + " has no subscription"))
		}
		done.apply = func(st *domain.State) {
			st.Subscribed(domain.Subscription{CustomerID: got.Customer, ID: sub.ID, PriceID: sub.Price, ProductID: sub.Product, Quantity: sub.Quantity,
				CheckoutSessionID: got.ID, PaymentMethod: cs.Method, DefaultMethodID: sub.DefaultPayment, PaidUntil: sub.CurrentPeriodEnd, Test: cs.Test})
		}
	case domain.ModePayment:
		paidAt := got.Created
		if pi := got.PaymentIntent; pi != nil && !pi.Created.IsZero() {
			paidAt = pi.Created
		}
		validThru, err := s.oneTimeValidThru(ctx, cs.AppID, paidAt)
		if err != nil {
			return outcome{}, err
		}
		done.apply = func(st *domain.State) {
			st.UnitsBought(got.Customer, got.ID, cs.Method, cs.Quantity, validThru, cs.Test)
		}
	case domain.ModeSetup:
		si := got.SetupIntent
		if si == nil || si.PaymentMethod == "" {
			return outcome{}, fault.Internal(errIncomplete("pspx checkout session " + got.ID + " has no payment method"))
		}
		// The customer's invoices charge its default method: make the new one the default at the
		// provider too, so route 13 and renewals use it.
		if _, err := s.pspx.SetDefaultPaymentMethod(ctx, key, "default-method-"+cs.ID, got.Customer, si.PaymentMethod); err != nil {
			return outcome{}, providerFault(err, "set pspx default payment method")
		}
		done.apply = func(st *domain.State) { st.PaymentMethodSetUp(got.Customer, got.ID, si.PaymentMethod) }
	}
	return done, nil
}
