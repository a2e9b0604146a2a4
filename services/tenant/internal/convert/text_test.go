package convert

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/berthhq/berth/pkg/text"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// The transport (proto option, checked by every server and the edge) and the domain
// (domain.Patch's text fields) must agree on which patch fields may span lines: today only the
// description. A field declared multi-line in proto but not in the domain would pass the edge and
// then be refused by the use case with another message, and the other way round.
func TestOnlyTheDescriptionSpansLinesInProtoAsInTheDomain(t *testing.T) {
	var multi []string
	for _, md := range []protoreflect.MessageDescriptor{
		(&tenantv1.TenantPatch{}).ProtoReflect().Descriptor(),
		(&tenantv1.AddressPatch{}).ProtoReflect().Descriptor(),
	} {
		for i := range md.Fields().Len() {
			if fd := md.Fields().Get(i); text.RuleOf(fd) == text.MultiLine {
				multi = append(multi, string(fd.FullName()))
			}
		}
	}
	if len(multi) != 1 || multi[0] != "berth.tenant.v1.TenantPatch.description" {
		t.Fatalf("multi-line patch fields = %v, want only TenantPatch.description (domain.Patch.texts)", multi)
	}
}
