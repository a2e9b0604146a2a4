package protocopy

import (
	"math/rand/v2"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// reference is Copy as protoreflect does it, field by field by name, for the direct path to be
// measured against.
func reference(dst, src proto.Message, explicit ...protoreflect.Name) {
	d, s := dst.ProtoReflect(), src.ProtoReflect()
	fields := d.Descriptor().Fields()
	for i := range fields.Len() {
		df := fields.Get(i)
		sf := s.Descriptor().Fields().ByName(df.Name())
		if sf == nil || slices.Contains(explicit, df.Name()) || df.IsList() || df.Kind() == protoreflect.MessageKind || !s.Has(sf) {
			continue
		}
		d.Set(df, s.Get(sf))
	}
}

func TestTheDirectCopyOfGeneratedStructsMatchesTheReflectionCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	strs := []string{"", "a", "Grüße 🚀"}
	for range 200 {
		src := &tenantv1.Tenant{}
		m := src.ProtoReflect()
		fields := m.Descriptor().Fields()
		for i := range fields.Len() {
			f := fields.Get(i)
			switch f.Kind() {
			case protoreflect.StringKind:
				m.Set(f, protoreflect.ValueOfString(strs[r.IntN(len(strs))]))
			case protoreflect.BoolKind:
				m.Set(f, protoreflect.ValueOfBool(r.IntN(2) == 0))
			case protoreflect.Int32Kind:
				m.Set(f, protoreflect.ValueOfInt32([]int32{0, -1, 7}[r.IntN(3)]))
			}
		}
		// A target that already holds values: unpopulated source fields must leave them.
		got, want := &analyticsv1.AnalyticsTenant{Name: "kept", PaymentFailedCount: 9}, &analyticsv1.AnalyticsTenant{Name: "kept", PaymentFailedCount: 9}
		fields2 := Same(&analyticsv1.AnalyticsTenant{}, &tenantv1.Tenant{}, "id")
		if len(fields2.direct) == 0 {
			t.Fatal("no field is copied directly: the generated structs were not recognised")
		}
		fields2.Copy(got, src)
		reference(want, src, "id")
		if !proto.Equal(got, want) {
			t.Fatalf("direct copy\n %v\nreflection copy\n %v", got, want)
		}
	}
}

func TestCopyRefusesMessagesOfOtherTypes(t *testing.T) {
	f := Same(&analyticsv1.AnalyticsTenant{}, &tenantv1.Tenant{}, "id")
	defer func() {
		if recover() == nil {
			t.Fatal("Copy into another type did not panic")
		}
	}()
	f.Copy(&analyticsv1.AnalyticsUser{}, &tenantv1.Tenant{})
}
