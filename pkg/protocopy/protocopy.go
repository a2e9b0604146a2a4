package protocopy

import (
	"errors"
	"fmt"
	"reflect"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Fields is the copy of the scalar fields of one message type (the target) from the same-named
// fields of another (the source).
type Fields struct {
	pairs    []pair  // target fields and their source counterparts, copied by Copy through protoreflect
	problems []error // what Check reports
	// direct are the pairs copied straight between the generated Go structs (direct.go); pairs
	// holds only the others. dstType and srcType are those structs' pointer types.
	direct           []directPair
	dstType, srcType reflect.Type
}

type pair struct{ dst, src protoreflect.FieldDescriptor }

// Same declares the copy into messages of dst's type of every singular scalar field (not a message,
// list or map) from the same-named field of src's type, except the fields named in explicit: those
// the caller fills itself because they differ in meaning, name or type. Only the types of dst and
// src matter, not their contents.
func Same(dst, src proto.Message, explicit ...protoreflect.Name) *Fields {
	dd, sd := dst.ProtoReflect().Descriptor(), src.ProtoReflect().Descriptor()
	f := &Fields{}
	skip := map[protoreflect.Name]bool{}
	for _, name := range explicit {
		skip[name] = true
		if dd.Fields().ByName(name) == nil {
			f.problems = append(f.problems, fmt.Errorf("%s has no field %s to fill explicitly", dd.FullName(), name))
		}
	}
	fields := dd.Fields()
	for i := range fields.Len() {
		d := fields.Get(i)
		if skip[d.Name()] || !scalar(d) {
			continue
		}
		s := sd.Fields().ByName(d.Name())
		switch {
		case s == nil:
			f.problems = append(f.problems, fmt.Errorf("%s.%s has no counterpart in %s", dd.FullName(), d.Name(), sd.FullName()))
		case !scalar(s) || s.Kind() != d.Kind() || (d.Kind() == protoreflect.EnumKind && s.Enum().FullName() != d.Enum().FullName()):
			f.problems = append(f.problems, fmt.Errorf("%s.%s is a %s, %s.%s a %s", dd.FullName(), d.Name(), kind(d), sd.FullName(), s.Name(), kind(s)))
		default:
			f.pairs = append(f.pairs, pair{dst: d, src: s})
		}
	}
	f.planDirect(dst, src)
	return f
}

// Copy sets every field of f that is populated in src on dst. A nil src copies nothing, like the
// getters of a nil message return zero values. dst and src must be of the types given to Same.
func (f *Fields) Copy(dst, src proto.Message) {
	if f.copyDirect(dst, src) {
		return // a nil source
	}
	d, s := dst.ProtoReflect(), src.ProtoReflect()
	for _, p := range f.pairs {
		if s.Has(p.src) {
			d.Set(p.dst, s.Get(p.src))
		}
	}
}

// Check reports every target field that Copy cannot fill (missing from the source or of another
// kind there) and every explicit name that is no field of the target.
func (f *Fields) Check() error { return errors.Join(f.problems...) }

func scalar(fd protoreflect.FieldDescriptor) bool {
	return fd.Cardinality() != protoreflect.Repeated && fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind
}

func kind(fd protoreflect.FieldDescriptor) string {
	if fd.IsList() || fd.IsMap() {
		return "repeated " + fd.Kind().String()
	}
	return fd.Kind().String()
}
