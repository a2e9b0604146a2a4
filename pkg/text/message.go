package text

import (
	"fmt"
	"sync"

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
	path, problem := walk(m.ProtoReflect())
	if problem == "" {
		return nil
	}
	return fault.InvalidField(path, "%s", problem)
}

// RuleOf is the rule of a string field: MultiLine when it declares (berth.edge.v1.multi_line).
// Every request message is checked on every call, and reading an option is a reflective lookup,
// so each field's rule is read once and remembered.
func RuleOf(fd protoreflect.FieldDescriptor) Rule {
	if r, ok := rules.Load(fd); ok {
		return r.(Rule)
	}
	r := SingleLine
	if opts := fd.Options(); opts != nil && proto.GetExtension(opts, edgev1.E_MultiLine).(bool) {
		r = MultiLine
	}
	rules.Store(fd, r)
	return r
}

// rules holds RuleOf's answers by field descriptor; descriptors live as long as the program.
var rules sync.Map

// walk returns the path of m's first bad string relative to m ("email", "users[2].email"), and what
// is wrong with it. Paths are built only for the bad string, on the way back out, so a message
// that passes (every request's case) costs no allocation.
func walk(m protoreflect.Message) (path, problem string) {
	if !m.IsValid() {
		return "", ""
	}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !isText(fd) || !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsMap():
			path, problem = walkMap(fd, v.Map())
		case fd.IsList():
			l := v.List()
			for j := range l.Len() {
				if path, problem = walkValue(fd, l.Get(j)); problem != "" {
					path = fmt.Sprintf("[%d]", j) + path
					break
				}
			}
		default:
			path, problem = walkValue(fd, v)
		}
		if problem != "" {
			return string(fd.Name()) + path, problem
		}
	}
	return "", ""
}

// walkMap returns the bad string's path below the map field (`["k"]`, `["k"].line1`), "" when the
// key itself is bad: printing it would repeat the bad bytes.
func walkMap(fd protoreflect.FieldDescriptor, m protoreflect.Map) (path, problem string) {
	m.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		if fd.MapKey().Kind() == protoreflect.StringKind {
			if problem = SingleLine.Problem(k.String()); problem != "" {
				path = ""
				return false
			}
		}
		if path, problem = walkValue(fd.MapValue(), v); problem != "" {
			path = fmt.Sprintf("[%q]", k.String()) + path
		}
		return problem == ""
	})
	return path, problem
}

// walkValue returns the bad string's path below a value of field fd: "" for the value itself,
// ".line1" inside a message.
func walkValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) (path, problem string) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return "", RuleOf(fd).Problem(v.String())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if path, problem = walk(v.Message()); problem != "" {
			return "." + path, problem
		}
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
