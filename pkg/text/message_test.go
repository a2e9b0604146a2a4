package text_test

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/text"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

func wantViolation(t *testing.T, err error, field, rule string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("Message = %v, want nil", err)
		}
		return
	}
	f, ok := fault.As(err)
	if !ok || f.Kind() != fault.KindInvalid {
		t.Fatalf("Message = %v, want an invalid fault", err)
	}
	if f.Field() != field || f.Message() != field+" "+rule {
		t.Errorf("fault = (%q, %q), want (%q, %q)", f.Field(), f.Message(), field, field+" "+rule)
	}
}

func TestMessageNamesTheFirstBadStringByItsPath(t *testing.T) {
	cases := []struct {
		name  string
		msg   proto.Message
		field string
		rule  string
	}{
		{"clean request", &tenantv1.UpdateTenantRequest{TenantId: "t1", Patch: &tenantv1.TenantPatch{Name: proto.String("ACME")}}, "", ""},
		{"nil message field", &tenantv1.UpdateTenantRequest{TenantId: "t1"}, "", ""},
		{"top-level field", &tenantv1.UpdateTenantRequest{TenantId: "t\xff"}, "tenantId", text.MsgInvalidUTF8},
		{"nested optional field", &tenantv1.UpdateTenantRequest{Patch: &tenantv1.TenantPatch{Name: proto.String("a\x00")}}, "patch.name", text.MsgNUL},
		{"two levels down", &tenantv1.UpdateTenantRequest{Patch: &tenantv1.TenantPatch{
			ShippingAddress: &tenantv1.AddressPatch{Line1: proto.String("Main St\n")}}}, "patch.shippingAddress.line1", text.MsgControl},
		{"recursive message", &tenantv1.UpdateTenantRequest{Patch: &tenantv1.TenantPatch{
			Tenant: &tenantv1.TenantPatch{CompanyName: proto.String("\x1b")}}}, "patch.tenant.companyName", text.MsgControl},
		{"first bad field in declaration order", &tenantv1.UpdateTenantRequest{TenantId: "\x01", Patch: &tenantv1.TenantPatch{Name: proto.String("\x00")}}, "tenantId", text.MsgControl},
		{"repeated message", &tenantv1.Tenant{Users: []*identityv1.TenantUser{{Email: "a@x"}, {Email: "b\x00@x"}}}, "users[1].email", text.MsgNUL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantViolation(t, text.Message(c.msg), c.field, c.rule)
		})
	}
}

// The tenant description is declared multi-line in proto; its neighbours are not.
func TestMessageHonoursTheMultiLineOption(t *testing.T) {
	ok := &tenantv1.UpdateTenantRequest{Patch: &tenantv1.TenantPatch{Description: proto.String("line one\r\n\tline two")}}
	wantViolation(t, text.Message(ok), "", "")
	bad := &tenantv1.UpdateTenantRequest{Patch: &tenantv1.TenantPatch{Description: proto.String("line\x00")}}
	wantViolation(t, text.Message(bad), "patch.description", text.MsgNUL)
	name := &tenantv1.UpdateTenantRequest{Patch: &tenantv1.TenantPatch{Name: proto.String("line one\nline two")}}
	wantViolation(t, text.Message(name), "patch.name", text.MsgControl)
}

func TestMessageChecksMapKeysAndValues(t *testing.T) {
	good, _ := structpb.NewStruct(map[string]any{"k": "v", "list": []any{"a", "b"}})
	wantViolation(t, text.Message(good), "", "")
	badValue, _ := structpb.NewStruct(map[string]any{"k": []any{"a", "b\x00"}})
	wantViolation(t, text.Message(badValue), `fields["k"].list_value.values[1].string_value`, text.MsgNUL)
	badKey := &structpb.Struct{Fields: map[string]*structpb.Value{"k\x01": structpb.NewStringValue("v")}}
	wantViolation(t, text.Message(badKey), "fields", text.MsgControl)
	wantViolation(t, text.Message(nil), "", "")
}

// Every request message passes through Message twice on its way in (edge and service), so a clean
// one must cost no allocation: paths are built only for a bad string.
func TestMessageAllocatesNothingForACleanMessage(t *testing.T) {
	m := &tenantv1.UpdateTenantRequest{TenantId: "t1", Patch: &tenantv1.TenantPatch{Name: proto.String("ACME"),
		Description: proto.String("two\nlines"), ShippingAddress: &tenantv1.AddressPatch{Line1: proto.String("Main St 1")}}}
	if n := testing.AllocsPerRun(100, func() {
		if err := text.Message(m); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Message allocated %.0f times for a clean message, want 0", n)
	}
}
