package text

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/berthhq/berth/pkg/fault"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
)

// Message checks every string in m — nested messages, repeated fields, map keys and values
// included — and returns an Invalid fault for the first one that breaks its field's rule, in field
// declaration order. The fault names the field by its path in m ("patch.shippingAddress.line1",
// "users[2].email", `labels["k"]`). A field carrying (berth.edge.v1.multi_line) = true is checked
// with MultiLine, every other with SingleLine. Bytes fields and unknown fields are not text and are
// not checked. A nil message passes.
func Message(m proto.Message) error {
	if m == nil {
		return nil
	}
	path, problem := walk(m.ProtoReflect(), "")
	if problem == "" {
		return nil
	}
	return fault.InvalidField(path, "%s", problem)
}

// RuleOf is the rule of a string field: MultiLine when it declares (berth.edge.v1.multi_line).
func RuleOf(fd protoreflect.FieldDescriptor) Rule {
	if opts := fd.Options(); opts != nil && proto.GetExtension(opts, edgev1.E_MultiLine).(bool) {
		return MultiLine
	}
	return SingleLine
}

func walk(m protoreflect.Message, prefix string) (path, problem string) {
	if !m.IsValid() {
		return "", ""
	}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !isText(fd) || !m.Has(fd) {
			continue
		}
		name := prefix + string(fd.Name())
		v := m.Get(fd)
		switch {
		case fd.IsMap():
			path, problem = walkMap(fd, v.Map(), name)
		case fd.IsList():
			l := v.List()
			for j := range l.Len() {
				if path, problem = walkValue(fd, l.Get(j), fmt.Sprintf("%s[%d]", name, j)); problem != "" {
					break
				}
			}
		default:
			path, problem = walkValue(fd, v, name)
		}
		if problem != "" {
			return path, problem
		}
	}
	return "", ""
}

func walkMap(fd protoreflect.FieldDescriptor, m protoreflect.Map, name string) (path, problem string) {
	m.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		if fd.MapKey().Kind() == protoreflect.StringKind {
			if problem = SingleLine.Problem(k.String()); problem != "" {
				path = name // the key itself is bad: printing it would repeat the bad bytes
				return false
			}
		}
		elem := fmt.Sprintf("%s[%q]", name, k.String())
		path, problem = walkValue(fd.MapValue(), v, elem)
		return problem == ""
	})
	return path, problem
}

func walkValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, name string) (path, problem string) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if p := RuleOf(fd).Problem(v.String()); p != "" {
			return name, p
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return walk(v.Message(), name+".")
	}
	return "", ""
}

// isText reports whether a field can hold a string somewhere: a string, a message, or a map whose
// key or value is one of them.
func isText(fd protoreflect.FieldDescriptor) bool {
	if fd.IsMap() {
		return isText(fd.MapKey()) || isText(fd.MapValue())
	}
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.MessageKind, protoreflect.GroupKind:
		return true
	}
	return false
}
