// Package edgev1 is the generated code of berth.edge.v1 (route.proto, text.proto), the options that
// declare how the REST edge renders each RPC and who may call it, and HTTPBindings, which reads an
// RPC's google.api.http bindings.
package edgev1

import (
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Binding is one HTTP binding of an RPC: its method and its path template as the google.api.http
// rule writes it ("/v1/users/{userId}").
type Binding struct {
	Method, Path string
	Rule         *annotations.HttpRule
}

// HTTPBindings lists an RPC's HTTP bindings, its rule's and then its additional ones; none for an
// RPC without the google.api.http option. Method is "" for a binding without a standard method.
func HTTPBindings(md protoreflect.MethodDescriptor) []Binding {
	rule, ok := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	if !ok || rule == nil {
		return nil
	}
	var out []Binding
	for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
		b := Binding{Rule: r}
		switch p := r.GetPattern().(type) {
		case *annotations.HttpRule_Get:
			b.Method, b.Path = "GET", p.Get
		case *annotations.HttpRule_Put:
			b.Method, b.Path = "PUT", p.Put
		case *annotations.HttpRule_Post:
			b.Method, b.Path = "POST", p.Post
		case *annotations.HttpRule_Delete:
			b.Method, b.Path = "DELETE", p.Delete
		case *annotations.HttpRule_Patch:
			b.Method, b.Path = "PATCH", p.Patch
		}
		out = append(out, b)
	}
	return out
}
