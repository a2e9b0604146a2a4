package grpcapi

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// CreateInvoice is route 13: the provider's payment intent with kind "pspxPaymentIntent" added.
// `test` counts when the query or the body sets it.
func (s *Server) CreateInvoice(ctx context.Context, req *billingv1.CreateInvoiceRequest) (*structpb.Struct, error) {
	appID, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	b := req.GetBody()
	raw, err := s.svc.CreateInvoice(ctx, appID, req.GetTenantId(), domain.InvoiceRequest{
		Price: b.GetPrice(), TaxRate: b.GetTaxRate(), Mode: b.GetMode(), Quantity: b.GetQuantity(),
		TenantID: b.GetTenantId(), UserID: b.GetUserId(), Test: req.GetTest() || b.GetTest(), Footer: b.GetFooter(),
	})
	if err != nil {
		return nil, err
	}
	out, err := providerObject(raw)
	if err != nil {
		return nil, err
	}
	out.Fields["kind"] = structpb.NewStringValue("pspxPaymentIntent")
	return out, nil
}

// ListInvoices is route 20.
func (s *Server) ListInvoices(ctx context.Context, req *billingv1.ListInvoicesRequest) (*billingv1.InvoiceList, error) {
	appID, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	page, err := s.svc.ListInvoices(ctx, appID, app.InvoiceQuery{Tenant: tenantUser(req), Limit: req.Limit,
		StartingAfter: req.GetStartingAfter(), EndingBefore: req.GetStartingbefore()})
	if err != nil {
		return nil, err
	}
	return invoiceList(page)
}

// invoiceList renders a page of provider invoices as route 20 answers it.
func invoiceList(page app.InvoicePage) (*billingv1.InvoiceList, error) {
	out := &billingv1.InvoiceList{Kind: "pspxInvoices", ItemsLength: int32(len(page.Invoices)), HasMore: page.HasMore,
		Items: make([]*structpb.Struct, 0, len(page.Invoices))}
	for _, raw := range page.Invoices {
		item, err := providerObject(raw)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, item)
	}
	return out, nil
}

// ChangeSubscription is route 19.
func (s *Server) ChangeSubscription(ctx context.Context, req *billingv1.ChangeSubscriptionRequest) (*emptypb.Empty, error) {
	appID, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	b := req.GetBody()
	err = s.svc.ChangeSubscription(ctx, appID, req.GetTenantId(), domain.PlanRequest{
		Price: b.GetPrice(), TaxRate: b.GetTaxRate(), Quantity: b.GetQuantity(),
		TenantID: b.GetTenantId(), UserID: b.GetUserId(), Test: req.GetTest() || b.GetTest(),
	})
	if err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// CancelSubscription is route 22.
func (s *Server) CancelSubscription(ctx context.Context, req *billingv1.TenantUserRequest) (*emptypb.Empty, error) {
	appID, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.svc.CancelSubscription(ctx, appID, tenantUser(req)); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// DeletePaymentMethods is route 21.
func (s *Server) DeletePaymentMethods(ctx context.Context, req *billingv1.TenantUserRequest) (*emptypb.Empty, error) {
	appID, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.svc.DeletePaymentMethods(ctx, appID, tenantUser(req)); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// tenantUser reads the tenant, user and mode of routes 20–22.
func tenantUser(req interface {
	GetTenantId() string
	GetUserId() string
	GetTest() bool
}) app.TenantUser {
	return app.TenantUser{TenantID: req.GetTenantId(), UserID: req.GetUserId(), Test: req.GetTest()}
}

// providerObject is a provider's JSON object as a proto Struct, which the edge renders back as
// the same JSON (numbers within 2^53, which every provider amount and timestamp is).
func providerObject(raw json.RawMessage) (*structpb.Struct, error) {
	out := &structpb.Struct{}
	if err := protojson.Unmarshal(raw, out); err != nil {
		return nil, fault.Internal(fmt.Errorf("provider object: %w", err))
	}
	if out.Fields == nil {
		out.Fields = map[string]*structpb.Value{}
	}
	return out, nil
}
