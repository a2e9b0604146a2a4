package protocopy

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Copying through protoreflect costs a Has, a Get (boxing the value) and a Set per field: about
// 5 µs for a user and its tenant, which made it the largest cost of an analytics list item. The
// generated Go structs hold proto3 scalars without presence as plain Go fields, so those pairs are
// copied straight from field to field at their struct offsets instead: the same effect (a zero
// value is an unpopulated field, so it is not copied), in nanoseconds. Every other pair (fields
// with presence, bytes, or structs that do not look generated) keeps the protoreflect path.

// directPair is a field copied between the generated structs: its offsets and its Go kind.
type directPair struct {
	dstOff, srcOff uintptr
	kind           reflect.Kind
}

// planDirect moves the pairs it can copy directly from f.pairs to f.direct.
func (f *Fields) planDirect(dst, src proto.Message) {
	dt, st := reflect.TypeOf(dst), reflect.TypeOf(src)
	if dt.Kind() != reflect.Pointer || st.Kind() != reflect.Pointer || dt.Elem().Kind() != reflect.Struct || st.Elem().Kind() != reflect.Struct {
		return
	}
	dFields, sFields := fieldsByNumber(dt.Elem()), fieldsByNumber(st.Elem())
	var slow []pair
	for _, p := range f.pairs {
		df, dok := dFields[p.dst.Number()]
		sf, sok := sFields[p.src.Number()]
		if !dok || !sok || p.dst.HasPresence() || p.src.HasPresence() || df.Type != sf.Type || !directKind(df.Type.Kind()) {
			slow = append(slow, p)
			continue
		}
		f.direct = append(f.direct, directPair{dstOff: df.Offset, srcOff: sf.Offset, kind: df.Type.Kind()})
	}
	f.pairs, f.dstType, f.srcType = slow, dt, st
}

// fieldsByNumber maps the proto field numbers of a generated struct (its `protobuf` tags) to its
// Go fields.
func fieldsByNumber(t reflect.Type) map[protoreflect.FieldNumber]reflect.StructField {
	out := map[protoreflect.FieldNumber]reflect.StructField{}
	for i := range t.NumField() {
		sf := t.Field(i)
		parts := strings.Split(sf.Tag.Get("protobuf"), ",")
		if len(parts) < 2 {
			continue
		}
		if n, err := strconv.Atoi(parts[1]); err == nil {
			out[protoreflect.FieldNumber(n)] = sf
		}
	}
	return out
}

func directKind(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool, reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// copyDirect copies the direct pairs and reports whether src is nil (nothing to copy at all).
// The types are checked on every call: a wrong one would otherwise write through wrong offsets.
func (f *Fields) copyDirect(dst, src proto.Message) (nilSrc bool) {
	if len(f.direct) == 0 {
		return false
	}
	if reflect.TypeOf(dst) != f.dstType || reflect.TypeOf(src) != f.srcType {
		panic(fmt.Sprintf("protocopy: Copy(%T, %T) on a copy declared for (%v, %v)", dst, src, f.dstType, f.srcType))
	}
	d, s := reflect.ValueOf(dst).UnsafePointer(), reflect.ValueOf(src).UnsafePointer()
	if s == nil {
		return true
	}
	for _, p := range f.direct {
		dp, sp := unsafe.Add(d, p.dstOff), unsafe.Add(s, p.srcOff)
		switch p.kind {
		case reflect.String:
			if v := *(*string)(sp); v != "" {
				*(*string)(dp) = v
			}
		case reflect.Bool:
			if v := *(*bool)(sp); v {
				*(*bool)(dp) = v
			}
		case reflect.Int32, reflect.Uint32, reflect.Float32:
			if v := *(*uint32)(sp); v != 0 { // the bits: a float32 zero is all zero bits too (-0 is not, and is copied, as protoreflect would)
				*(*uint32)(dp) = v
			}
		case reflect.Int64, reflect.Uint64, reflect.Float64:
			if v := *(*uint64)(sp); v != 0 {
				*(*uint64)(dp) = v
			}
		}
	}
	return false
}
