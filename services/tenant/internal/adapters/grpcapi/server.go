package grpcapi

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/tenant/internal/app"
	"github.com/berthhq/berth/services/tenant/internal/convert"
	"github.com/berthhq/berth/services/tenant/internal/domain"

	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// Server implements tenantv1.TenantServiceServer, tenantv1.TenantInternalServiceServer and
// tenantv1.TenantAdminServiceServer.
type Server struct {
	tenantv1.UnimplementedTenantServiceServer
	tenantv1.UnimplementedTenantInternalServiceServer
	tenantv1.UnimplementedTenantAdminServiceServer
	svc *app.Service
}

// Register serves the three services of svc on s.
func Register(s grpc.ServiceRegistrar, svc *app.Service) {
	srv := &Server{svc: svc}
	tenantv1.RegisterTenantServiceServer(s, srv)
	tenantv1.RegisterTenantInternalServiceServer(s, srv)
	tenantv1.RegisterTenantAdminServiceServer(s, srv)
}

// GetTenant is route 5.
func (s *Server) GetTenant(ctx context.Context, req *tenantv1.GetTenantRequest) (*tenantv1.Tenant, error) {
	appID, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.svc.GetTenant(ctx, appID, req.GetTenantId())
	return render(v, err)
}

// GetMyTenant is GET /v1/tenants/me. The route admits tenant access tokens only; the check here
// keeps the handler from serving any other principal should the route option ever change.
func (s *Server) GetMyTenant(ctx context.Context, _ *tenantv1.GetMyTenantRequest) (*tenantv1.Tenant, error) {
	p, ok := authn.FromContext(ctx)
	if ok && p.Kind == authn.KindAPIKey {
		return nil, authn.MeWithoutToken("tenantId", "tenant") // an API key has no tenant of its own
	}
	if !ok || p.Kind != authn.KindTenantToken || p.AppID == "" {
		return nil, fault.Unauthenticated("Unauthorized")
	}
	v, err := s.svc.GetMyTenant(ctx, p.AppID, p.TenantID)
	return render(v, err)
}

// UpdateTenant is route 17.
func (s *Server) UpdateTenant(ctx context.Context, req *tenantv1.UpdateTenantRequest) (*emptypb.Empty, error) {
	appID, err := authn.CallerApp(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.svc.UpdateTenant(ctx, appID, req.GetTenantId(), convert.UpdateBody(req.GetPatch()), credential(ctx)); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// credential tells route 17 whether the app's server (a write API key) is calling; any other
// admitted principal (a tenant access token) gets the end user's rights.
func credential(ctx context.Context) app.Credential {
	if p, ok := authn.FromContext(ctx); ok && p.Kind == authn.KindAPIKey && p.KeyType == "write" {
		return app.CredentialWriteKey
	}
	return app.CredentialTenantToken
}

// CreateTenant provisions a tenant for an app (operators only; the policy checked the admin token).
func (s *Server) CreateTenant(ctx context.Context, req *tenantv1.CreateTenantRequest) (*tenantv1.Tenant, error) {
	t, err := s.svc.CreateTenant(ctx, domain.NewTenant{
		AppID:           req.GetAppId(),
		Name:            req.GetName(),
		Description:     req.GetDescription(),
		ShippingAddress: convert.AddressPatch(req.GetShippingAddress()),
		BillingAddress:  convert.AddressPatch(req.GetBillingAddress()),
	})
	if err != nil {
		return nil, err
	}
	return convert.Tenant(t), nil
}

// SearchTenants finds the app's tenants by name prefix or id, a page at a time (the admin token,
// or a project member's operator token for the app; the policy checked it).
func (s *Server) SearchTenants(ctx context.Context, req *tenantv1.SearchTenantsRequest) (*tenantv1.TenantPage, error) {
	p, err := s.svc.SearchTenants(ctx, req.GetAppId(), req.GetQuery(), req.GetPageSize(), req.GetAfter())
	if err != nil {
		return nil, err
	}
	return convert.TenantPage(p.Tenants, p.Next), nil
}

// CreateTenantForSignUp creates the tenant of a user signing up (identity only; the policy checked
// the service token), with the same defaults as an operator's tenant.
func (s *Server) CreateTenantForSignUp(ctx context.Context, req *tenantv1.CreateTenantForSignUpRequest) (*tenantv1.Tenant, error) {
	t, err := s.svc.CreateTenant(ctx, domain.NewTenant{AppID: req.GetAppId(), Name: req.GetName()})
	if err != nil {
		return nil, err
	}
	return convert.Tenant(t), nil
}

// ApplyBillingState stores the billing state billing decided (billing only; the policy checked the
// service token).
func (s *Server) ApplyBillingState(ctx context.Context, req *tenantv1.ApplyBillingStateRequest) (*emptypb.Empty, error) {
	err := s.svc.ApplyBillingState(ctx, req.GetAppId(), req.GetTenantId(), req.GetRevision(),
		convert.Billing(req.GetState()), req.GetState().GetPspxOneTimePaymentValidThru())
	if err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// GetTenantRef names a live tenant for billing.
func (s *Server) GetTenantRef(ctx context.Context, req *tenantv1.GetTenantRefRequest) (*tenantv1.TenantRef, error) {
	t, err := s.svc.GetTenantRef(ctx, req.GetAppId(), req.GetTenantId())
	if err != nil {
		return nil, err
	}
	return &tenantv1.TenantRef{TenantId: t.ID, Name: t.Name, CompanyName: t.CompanyName}, nil
}

// render answers a tenant read as route 5 does, users included.
func render(v app.TenantView, err error) (*tenantv1.Tenant, error) {
	if err != nil {
		return nil, err
	}
	out := convert.Tenant(v.Tenant)
	out.Users = v.Users
	return out, nil
}
