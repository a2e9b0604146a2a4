package billing

import (
	"context"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/services/webhook/internal/app"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// Billing implements app.Billing over billing's ProviderEventService.
type Billing struct {
	client billingv1.ProviderEventServiceClient
}

// New returns the adapter over a billing client whose calls carry the service token.
func New(c billingv1.ProviderEventServiceClient) *Billing { return &Billing{client: c} }

var (
	errNoCustomer = fault.NotFound("Customer not found")
	errNoApp      = fault.NotFound("App not found")
)

// ResolvePspxCustomer asks billing for a customer's connection and signing secrets.
func (b *Billing) ResolvePspxCustomer(ctx context.Context, customerID string, live bool) (app.Connection, error) {
	c, err := b.client.ResolvePspxCustomer(ctx, &billingv1.ResolvePspxCustomerRequest{CustomerId: customerID, Livemode: live})
	if err != nil {
		return app.Connection{}, grpcx.Downstream(err, "resolve pspx customer", errNoCustomer)
	}
	return app.Connection{ID: c.GetConnectionId(), Secrets: c.GetWebhookSecrets()}, nil
}

// ApplyPspxEvent asks billing to apply a verified pspx event. Any failure is the call's 500: the
// provider delivers it again; billing says a refusal for good in its answer (rejected), never as
// a status.
func (b *Billing) ApplyPspxEvent(ctx context.Context, connectionID string, live bool, typ string, object []byte) (app.Applied, error) {
	return applied(b.client.ApplyPspxEvent(ctx, &billingv1.ApplyPspxEventRequest{ConnectionId: connectionID, Livemode: live,
		Type: typ, Object: object}))
}

// ApplyPspyPayment asks billing to fetch and apply a pspy payment.
func (b *Billing) ApplyPspyPayment(ctx context.Context, connectionID, paymentID string) (app.Applied, error) {
	return applied(b.client.ApplyPspyPayment(ctx, &billingv1.ApplyPspyPaymentRequest{ConnectionId: connectionID, PaymentId: paymentID}))
}

// AppConnections asks billing for the app's provider connections.
func (b *Billing) AppConnections(ctx context.Context, appID string) ([]string, error) {
	res, err := b.client.ListAppConnections(ctx, &billingv1.ListAppConnectionsRequest{AppId: appID})
	if err != nil {
		return nil, grpcx.Downstream(err, "list the app's connections", errNoApp)
	}
	return res.GetConnectionIds(), nil
}

func applied(a *billingv1.AppliedEvent, err error) (app.Applied, error) {
	if err != nil {
		return app.Applied{}, err
	}
	return app.Applied{Ignored: a.GetIgnored(), Status: a.GetStatus(), Effect: a.GetEffect(), Rejected: a.GetRejected()}, nil
}
