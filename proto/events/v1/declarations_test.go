package eventsv1_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// files is a registry holding one file of package pkg whose messages declare the given types.
func files(t *testing.T, pkg string, declared map[string][]string) *protoregistry.Files {
	t.Helper()
	fd := &descriptorpb.FileDescriptorProto{
		Name: proto.String("test.proto"), Package: proto.String(pkg), Syntax: proto.String("proto3"),
	}
	for msg, types := range declared {
		opts := &descriptorpb.MessageOptions{}
		proto.SetExtension(opts, eventsv1.E_Event, &eventsv1.Event{Types: types})
		fd.MessageType = append(fd.MessageType, &descriptorpb.DescriptorProto{Name: proto.String(msg), Options: opts})
	}
	f, err := protodesc.NewFile(fd, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	var reg protoregistry.Files
	if err := reg.RegisterFile(f); err != nil {
		t.Fatal(err)
	}
	return &reg
}

func TestDeclarationsAreSortedByType(t *testing.T) {
	decls, err := eventsv1.Declarations(files(t, "berth.shop.v1", map[string][]string{
		"OrderChanged": {"shop.order.placed", "shop.order.cancelled"},
		"CartChanged":  {"shop.cart.emptied"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range decls {
		got = append(got, string(d.Type)+"="+string(d.Payload.Name())+"@"+d.Context())
	}
	want := "shop.cart.emptied=CartChanged@shop shop.order.cancelled=OrderChanged@shop shop.order.placed=OrderChanged@shop"
	if strings.Join(got, " ") != want {
		t.Fatalf("declarations = %v, want %s", got, want)
	}
}

func TestDeclarationsRefuseAnAmbiguousOrMisplacedType(t *testing.T) {
	tests := []struct {
		name, pkg string
		declared  map[string][]string
		wantErr   string
	}{
		{"no name", "berth.shop.v1", map[string][]string{"A": {"shop"}}, "not <context>.<name>"},
		{"upper case", "berth.shop.v1", map[string][]string{"A": {"shop.Order.placed"}}, "not <context>.<name>"},
		{"wildcard", "berth.shop.v1", map[string][]string{"A": {"shop.order.*"}}, "not <context>.<name>"},
		{"other context", "berth.shop.v1", map[string][]string{"A": {"billing.invoice.paid"}}, "outside a berth.billing.* package"},
		{"outside berth", "acme.shop.v1", map[string][]string{"A": {"shop.order.placed"}}, "outside a berth.shop.* package"},
		{"declared twice", "berth.shop.v1", map[string][]string{"A": {"shop.order.placed"}, "B": {"shop.order.placed"}}, "declared by both berth.shop.v1.A and berth.shop.v1.B"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := eventsv1.Declarations(files(t, tt.pkg, tt.declared))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}
