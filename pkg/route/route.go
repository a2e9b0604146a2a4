// Package route reads the per-RPC edge option (proto/edge/v1) that declares a method's envelope
// family, success status and access policy. The gateway and the access-policy interceptor both use
// it, so the REST edge and direct gRPC callers see one declaration.
package route

import (
	"strings"
	"sync"

	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

var cache sync.Map // full method name -> *edgev1.Route (nil when the method has none)

// ForMethod returns the route option of a gRPC method given as "/pkg.Service/Method" (the form
// grpc and grpc-gateway's runtime.RPCMethod use). ok is false when the method is unknown to the
// proto registry or carries no option; callers treat that as "deny".
func ForMethod(fullMethod string) (r *edgev1.Route, ok bool) {
	if v, hit := cache.Load(fullMethod); hit {
		r = v.(*edgev1.Route)
		return r, r != nil
	}
	r = lookup(fullMethod)
	cache.Store(fullMethod, r)
	return r, r != nil
}

func lookup(fullMethod string) *edgev1.Route {
	name := strings.TrimPrefix(fullMethod, "/")
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return nil
	}
	desc, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name[:i] + "." + name[i+1:]))
	if err != nil {
		return nil
	}
	md, isMethod := desc.(protoreflect.MethodDescriptor)
	if !isMethod {
		return nil
	}
	return Of(md)
}

// Of returns the route option of a method descriptor, or nil when it has none.
func Of(md protoreflect.MethodDescriptor) *edgev1.Route {
	opts := md.Options()
	if opts == nil || !proto.HasExtension(opts, edgev1.E_Route) {
		return nil
	}
	r, _ := proto.GetExtension(opts, edgev1.E_Route).(*edgev1.Route)
	return r
}

// Status is the HTTP status of a success on the route (200 unless declared).
func Status(r *edgev1.Route) int {
	if r == nil || r.GetSuccessStatus() == 0 {
		return 200
	}
	return int(r.GetSuccessStatus())
}
