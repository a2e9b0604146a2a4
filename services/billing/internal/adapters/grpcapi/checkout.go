package grpcapi

import (
	"context"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// CreateCheckoutSession is route 10. `test` counts when the query or the body sets it.
func (s *Server) CreateCheckoutSession(ctx context.Context, req *billingv1.CreateCheckoutSessionRequest) (*billingv1.CheckoutSession, error) {
	appID, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	// The payer is the user whose token opens the checkout; an API key names nobody.
	payer := ""
	if p, ok := authn.FromContext(ctx); ok && p.Kind == authn.KindTenantToken {
		payer = p.UserID
	}
	b := req.GetBody()
	cs, payURL, err := s.svc.CreateCheckout(ctx, appID, req.GetTenantId(), payer, domain.CheckoutRequest{
		Price: b.GetPrice(), TaxRate: b.GetTaxRate(), AllowedCountry: b.GetAllowedCountry(),
		PaymentMethodType: b.GetPaymentMethodType(), BillingAddressCollection: b.GetBillingAddressCollection(),
		Mode: b.GetMode(), Quantity: b.GetQuantity(), IsReverseCharge: b.GetIsReverseCharge(), State: b.GetState(),
		Test: req.GetTest() || b.GetTest(),
	})
	if err != nil {
		return nil, err
	}
	return &billingv1.CheckoutSession{Kind: "checkoutSession", Id: cs.ID, Hash: cs.Hash, NextAction: &billingv1.NextAction{Url: payURL}}, nil
}

// PageServer implements billingv1.PaymentPageServiceServer for the edge's payment pages.
type PageServer struct {
	billingv1.UnimplementedPaymentPageServiceServer
	svc *app.Service
}

// OpenCheckout checks a payment-page link.
func (p *PageServer) OpenCheckout(ctx context.Context, req *billingv1.OpenCheckoutRequest) (*billingv1.OpenedCheckout, error) {
	u, err := p.svc.OpenCheckout(ctx, req.GetClientId(), req.GetSessionId(), req.GetHash(), req.GetState())
	if err != nil {
		return nil, err
	}
	return &billingv1.OpenedCheckout{ProviderUrl: u}, nil
}

// ReturnCheckout settles a session the provider sent the payer back from.
func (p *PageServer) ReturnCheckout(ctx context.Context, req *billingv1.ReturnCheckoutRequest) (*billingv1.ReturnedCheckout, error) {
	u, status, err := p.svc.ReturnCheckout(ctx, req.GetSessionId(), req.GetState())
	if err != nil {
		return nil, err
	}
	return &billingv1.ReturnedCheckout{RedirectUrl: u, Status: status}, nil
}
