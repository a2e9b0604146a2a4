package app

import (
	"context"
	"net/url"
	"slices"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// setupAmount is what a pspy setup charges to establish the mandate: the smallest amount, refunded
// once paid.
const setupAmount = 1

// pspyCheckout creates the pspy payment for cs from the app's catalog: sequence type first for a
// subscription or a setup (it establishes the mandate), oneoff for a payment.
func (s *Service) pspyCheckout(ctx context.Context, key string, tenant TenantRef, req domain.CheckoutRequest, cs *domain.CheckoutSession) error {
	price, tax, err := s.catalogEntries(ctx, cs.AppID, req.Price, req.TaxRate)
	if err != nil {
		return err
	}
	switch {
	case req.Mode == domain.ModeSubscription && price.Interval == "":
		return fault.InvalidField("price", "must be a recurring price for a subscription")
	case req.Mode == domain.ModePayment && price.Interval != "":
		return fault.InvalidField("price", "must be a one-time price for a payment")
	}
	if req.IsReverseCharge {
		tax = nil
	}
	amount, currency, description := domain.Total(price, cs.Quantity, tax), price.Currency, price.ProductName
	sequence := "first"
	switch req.Mode {
	case domain.ModePayment:
		sequence = "oneoff"
	case domain.ModeSetup:
		amount, description = setupAmount, "Payment method setup"
		if currency == "" {
			currency = "EUR"
		}
	}
	meta := s.customerMetadata(cs.AppID, cs.TenantID)
	err = s.customer(ctx, cs, func(idem string) (string, error) {
		c, err := s.pspy.CreateCustomer(ctx, key, idem, PspyCustomerInput{Name: customerName(tenant), Metadata: meta})
		if err != nil {
			return "", providerFault(err, "create pspy customer")
		}
		return c.ID, nil
	})
	if err != nil {
		return err
	}
	method := []string{"creditcard"}
	if req.PaymentMethodType == "sepa" {
		method = []string{"directdebit"}
	}
	payment, err := s.pspy.CreatePayment(ctx, key, "checkout-"+cs.ID, PspyPaymentInput{
		Amount: PspyAmount{Currency: currency, Value: domain.FormatMinor(amount, currency)}, Description: description,
		RedirectURL: s.returnPage(*cs), CancelURL: s.returnPage(*cs), WebhookURL: s.pspyWebhookURL(cs.ConnectionID),
		SequenceType: sequence, CustomerID: cs.CustomerID, Method: method, Metadata: tagged(meta, metaCheckout, cs.ID),
	})
	if err != nil {
		return providerFault(err, "create pspy payment")
	}
	cs.ProviderSessionID, cs.ProviderURL = payment.ID, payment.CheckoutURL
	return nil
}

// pspyWebhookURL is route 4 for a connection: pspy signs nothing, the connection id in the URL
// and a fetch of the payment with the connection's key are what tie a notification to the app.
func (s *Service) pspyWebhookURL(connectionID string) string {
	return s.publicURL + "/api/v1/webhooks/pspy?paymentProviderUuid=" + url.QueryEscape(connectionID)
}

// catalogEntries finds a pspy app's catalog price (none for a setup without one) and tax rate.
func (s *Service) catalogEntries(ctx context.Context, appID, priceID, taxID string) (domain.CatalogPrice, *domain.CatalogTaxRate, error) {
	prices, rates, err := s.store.Catalog(ctx, appID)
	if err != nil {
		return domain.CatalogPrice{}, nil, err
	}
	var price domain.CatalogPrice
	if priceID != "" {
		i := slices.IndexFunc(prices, func(p domain.CatalogPrice) bool { return p.ID == priceID })
		if i < 0 {
			return domain.CatalogPrice{}, nil, fault.InvalidField("price", "names no price of this app's catalog")
		}
		price = prices[i]
	}
	if taxID == "" {
		return price, nil, nil
	}
	i := slices.IndexFunc(rates, func(r domain.CatalogTaxRate) bool { return r.ID == taxID })
	if i < 0 {
		return domain.CatalogPrice{}, nil, fault.InvalidField("taxRate", "names no tax rate of this app's catalog")
	}
	return price, &rates[i], nil
}

// pspyOutcome reads the provider's payment. Paid settles by mode; open stays open; pending and
// authorized wait for the provider; failed fails; canceled and expired are cancelled.
func (s *Service) pspyOutcome(ctx context.Context, key string, cs domain.CheckoutSession) (outcome, error) {
	p, err := s.pspy.Payment(ctx, key, cs.ProviderSessionID)
	if err != nil {
		return outcome{}, providerFault(err, "fetch pspy payment")
	}
	switch p.Status {
	case "paid":
		return s.pspyPaid(ctx, key, cs, p)
	case "failed":
		return outcome{status: domain.CheckoutFailed}, nil
	case "canceled", "expired":
		return outcome{status: domain.CheckoutCancelled}, nil
	case "pending", "authorized":
		return outcome{status: domain.CheckoutPending}, nil
	}
	return outcome{status: domain.CheckoutOpen}, nil
}

// pspyPaid is the effect of a paid pspy checkout payment. A subscription starts at the provider
// now (its first charge one interval after the paid first payment); a setup's payment is refunded
// and its mandate becomes the default. Both provider calls carry the session's idempotency keys.
func (s *Service) pspyPaid(ctx context.Context, key string, cs domain.CheckoutSession, p PspyPayment) (outcome, error) {
	done := outcome{status: domain.CheckoutCompleted, paid: pspyCollected(p)}
	paidAt := p.PaidAt
	if paidAt.IsZero() {
		paidAt = s.now()
	}
	switch cs.Mode {
	case domain.ModePayment:
		validThru, err := s.oneTimeValidThru(ctx, cs.AppID, paidAt)
		if err != nil {
			return outcome{}, err
		}
		done.apply = func(st *domain.State) { st.UnitsBought(p.CustomerID, p.ID, cs.Method, cs.Quantity, validThru, cs.Test) }
	case domain.ModeSubscription:
		price, _, err := s.catalogEntries(ctx, cs.AppID, cs.Price, "")
		if err != nil {
			return outcome{}, err
		}
		paidUntil := domain.AddInterval(paidAt, price.Interval)
		sub, err := s.pspy.CreateSubscription(ctx, key, "subscription-"+cs.ID, p.CustomerID, PspySubscriptionInput{
			Amount: p.Amount, Interval: price.Interval, StartDate: paidUntil.Format("2006-01-02"), Description: price.ProductName,
			MandateID: p.MandateID, WebhookURL: s.pspyWebhookURL(cs.ConnectionID), Metadata: tagged(s.customerMetadata(cs.AppID, cs.TenantID), metaCheckout, cs.ID),
		})
		if err != nil {
			return outcome{}, providerFault(err, "create pspy subscription")
		}
		done.apply = func(st *domain.State) {
			st.Subscribed(domain.Subscription{CustomerID: p.CustomerID, ID: sub.ID, PriceID: cs.Price, Quantity: cs.Quantity, CheckoutSessionID: p.ID,
				PaymentMethod: cs.Method, DefaultMethodID: p.MandateID, PaidUntil: paidUntil, Test: cs.Test})
		}
	case domain.ModeSetup:
		if p.MandateID == "" {
			return outcome{}, fault.Internal(errIncomplete("paid pspy setup payment " + p.ID + " has no mandate"))
		}
		if _, err := s.pspy.CreateRefund(ctx, key, "refund-"+cs.ID, p.ID, p.Amount, "Payment method setup"); err != nil {
			return outcome{}, providerFault(err, "refund pspy setup payment")
		}
		done.apply = func(st *domain.State) { st.PaymentMethodSetUp(p.CustomerID, p.ID, p.MandateID) }
	}
	return done, nil
}
