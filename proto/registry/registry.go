package registry

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// Contexts are Berth's bounded contexts with protos, in the order the edge dials them. Adding a
// context adds its entry here; TestEveryContextPackageIsRegistered and
// TestHTTPListsEveryHTTPBoundService fail until it is complete.
var Contexts = []Context{
	{Name: "identity", File: identityv1.File_identity_v1_identity_proto, HTTP: []Service{
		Forward(&identityv1.IdentityService_ServiceDesc, identityv1.NewIdentityServiceClient, identityv1.RegisterIdentityServiceHandlerClient),
		Forward(&identityv1.OperatorService_ServiceDesc, identityv1.NewOperatorServiceClient, identityv1.RegisterOperatorServiceHandlerClient),
		Forward(&identityv1.TokenService_ServiceDesc, identityv1.NewTokenServiceClient, identityv1.RegisterTokenServiceHandlerClient),
	}},
	{Name: "tenant", File: tenantv1.File_tenant_v1_tenant_proto, HTTP: []Service{
		Forward(&tenantv1.TenantService_ServiceDesc, tenantv1.NewTenantServiceClient, tenantv1.RegisterTenantServiceHandlerClient),
	}},
	{Name: "analytics", File: analyticsv1.File_analytics_v1_analytics_proto, HTTP: []Service{
		Forward(&analyticsv1.AnalyticsService_ServiceDesc, analyticsv1.NewAnalyticsServiceClient, analyticsv1.RegisterAnalyticsServiceHandlerClient),
	}},
	{Name: "billing", File: billingv1.File_billing_v1_billing_proto, HTTP: []Service{
		Forward(&billingv1.BillingService_ServiceDesc, billingv1.NewBillingServiceClient, billingv1.RegisterBillingServiceHandlerClient),
	}},
	{Name: "webhook", File: webhookv1.File_webhook_v1_webhook_proto, HTTP: []Service{
		Forward(&webhookv1.WebhookIngestService_ServiceDesc, webhookv1.NewWebhookIngestServiceClient, webhookv1.RegisterWebhookIngestServiceHandlerClient),
	}},
	{Name: "outbound", File: outboundv1.File_outbound_v1_outbound_proto, HTTP: []Service{
		Forward(&outboundv1.OutboundService_ServiceDesc, outboundv1.NewOutboundServiceClient, outboundv1.RegisterOutboundServiceHandlerClient),
	}},
}

// Context is one bounded context's protos.
type Context struct {
	// Name is the context's name: its module's (module.Module.Name), its proto package's
	// (berth.<name>.v1) and the first segment of the event types it declares.
	Name string
	// File is one file of the context's generated Go package. Naming it links the package in,
	// which registers every file of the package; Files finds them by File's proto package.
	File protoreflect.FileDescriptor
	// HTTP are the context's gRPC services with google.api.http bindings: the REST routes the
	// edge serves for it.
	HTTP []Service
}

// Service is one HTTP-bound gRPC service.
type Service struct {
	// Name is the service's full name (berth.identity.v1.IdentityService); its methods'
	// google.api.http bindings are its routes.
	Name string
	// Register adds the service's routes to mux: grpc-gateway's generated handlers, each calling
	// the service through a generated client over cc.
	Register func(ctx context.Context, mux *runtime.ServeMux, cc grpc.ClientConnInterface) error
}

// Forward is the Service of a generated service: its descriptor, its client's constructor and its
// grpc-gateway registration (Register<Service>HandlerClient). The routes always go through a
// client, never Register...HandlerServer, so a forwarded call passes the service's interceptors
// exactly as a direct gRPC caller's would.
func Forward[C any](desc *grpc.ServiceDesc, newClient func(grpc.ClientConnInterface) C,
	register func(context.Context, *runtime.ServeMux, C) error) Service {
	return Service{Name: desc.ServiceName, Register: func(ctx context.Context, mux *runtime.ServeMux, cc grpc.ClientConnInterface) error {
		return register(ctx, mux, newClient(cc))
	}}
}

// Package is the context's proto package, berth.<name>.v1.
func (c Context) Package() protoreflect.FullName { return c.File.Package() }

// Files are the files of the context's proto package, by path.
func (c Context) Files() []protoreflect.FileDescriptor {
	var files []protoreflect.FileDescriptor
	protoregistry.GlobalFiles.RangeFilesByPackage(c.Package(), func(fd protoreflect.FileDescriptor) bool {
		files = append(files, fd)
		return true
	})
	slices.SortFunc(files, func(a, b protoreflect.FileDescriptor) int { return cmp.Compare(a.Path(), b.Path()) })
	return files
}

// Files holds the files of every context: what genevents, genopenapi and the event catalog read.
// The packages those files import (edge/v1's and events/v1's options, google's) are not in it;
// they declare no service and no event.
func Files() *protoregistry.Files {
	files := new(protoregistry.Files)
	for _, c := range Contexts {
		for _, fd := range c.Files() {
			// Each file is in one package, and each package in one context (TestContextsAreDistinct).
			if err := files.RegisterFile(fd); err != nil {
				panic("registry: " + err.Error())
			}
		}
	}
	return files
}

// ContextOf returns the context whose proto package declares fd, and false when none does.
func ContextOf(fd protoreflect.FileDescriptor) (Context, bool) {
	for _, c := range Contexts {
		if c.Package() == fd.Package() {
			return c, true
		}
	}
	return Context{}, false
}

// CheckFile fails for a file that declares a service or an event outside every context: its
// package is missing from Contexts, so the edge would not serve its routes, genevents would write
// no constants for its events and no process would create its stream. Files that only declare
// options and messages for others (edge/v1, events/v1) pass.
func CheckFile(fd protoreflect.FileDescriptor) error {
	if _, ok := ContextOf(fd); ok {
		return nil
	}
	if fd.Services().Len() > 0 {
		return fmt.Errorf("%s declares the service %s, but its package %s is not in proto/registry's Contexts", fd.Path(), fd.Services().Get(0).FullName(), fd.Package())
	}
	if md := firstEventPayload(fd.Messages()); md != nil {
		return fmt.Errorf("%s declares events (%s), but its package %s is not in proto/registry's Contexts", fd.Path(), md.FullName(), fd.Package())
	}
	return nil
}

// firstEventPayload is the first message among mds, nested ones included, that declares an event
// type.
func firstEventPayload(mds protoreflect.MessageDescriptors) protoreflect.MessageDescriptor {
	for i := range mds.Len() {
		md := mds.Get(i)
		if len(eventsv1.Of(md)) > 0 {
			return md
		}
		if nested := firstEventPayload(md.Messages()); nested != nil {
			return nested
		}
	}
	return nil
}

// Names are the contexts' names, in the list's order.
func Names() []string {
	names := make([]string, len(Contexts))
	for i, c := range Contexts {
		names[i] = c.Name
	}
	return names
}
