package pbjson

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// options are the protojson options this package reproduces.
var options = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// Append appends the JSON of m to b, as options.Marshal would render it.
func Append(b []byte, m proto.Message) ([]byte, error) {
	r := m.ProtoReflect()
	p := planFor(r.Descriptor())
	if p == nil {
		return options.MarshalAppend(b, m)
	}
	return p.append(b, r)
}

// plan writes messages of one type: its fields in declaration order, as protojson orders them.
type plan struct {
	fields []field
}

type field struct {
	fd  protoreflect.FieldDescriptor
	key []byte // `"name":`, with the comma before every field but the first
	enc func(b []byte, v protoreflect.Value) ([]byte, error)
	sub *plan // message fields and lists of messages
}

var plans sync.Map // protoreflect.FullName -> *plan, or unsupported{}

type unsupported struct{}

// planFor returns the plan of a message type, nil when Append must leave it to protojson.
func planFor(md protoreflect.MessageDescriptor) *plan {
	if v, ok := plans.Load(md.FullName()); ok {
		p, _ := v.(*plan)
		return p
	}
	p := build(md, map[protoreflect.FullName]*plan{})
	if p == nil {
		plans.Store(md.FullName(), unsupported{})
		return nil
	}
	plans.Store(md.FullName(), p)
	return p
}

// build plans md; building records plans under construction, so a recursive type refers to its
// own plan instead of recursing for ever.
func build(md protoreflect.MessageDescriptor, building map[protoreflect.FullName]*plan) *plan {
	if md.FullName().Parent() == "google.protobuf" || md.IsMapEntry() || md.Oneofs().Len() > 0 {
		return nil // well-known types have JSON forms of their own; oneofs have presence rules
	}
	if p, ok := building[md.FullName()]; ok {
		return p
	}
	p := &plan{}
	building[md.FullName()] = p
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if fd.IsMap() || fd.Kind() == protoreflect.GroupKind || (fd.HasPresence() && fd.Kind() != protoreflect.MessageKind) {
			return nil
		}
		key := strconv.AppendQuote(nil, string(fd.Name())) // proto names are ASCII identifiers
		if i > 0 {
			key = append([]byte{','}, key...)
		}
		f := field{fd: fd, key: append(key, ':')}
		if fd.Kind() == protoreflect.MessageKind {
			if f.sub = build(fd.Message(), building); f.sub == nil {
				return nil
			}
		} else if f.enc = scalarEncoder(fd); f.enc == nil {
			return nil
		}
		p.fields = append(p.fields, f)
	}
	return p
}

func (p *plan) append(b []byte, m protoreflect.Message) ([]byte, error) {
	b = append(b, '{')
	var err error
	for i := range p.fields {
		f := &p.fields[i]
		b = append(b, f.key...)
		switch {
		case f.fd.IsList():
			b, err = f.list(b, m.Get(f.fd).List())
		case f.sub != nil:
			if !m.Has(f.fd) {
				b = append(b, "null"...)
				continue
			}
			b, err = f.sub.append(b, m.Get(f.fd).Message())
		default:
			b, err = f.enc(b, m.Get(f.fd))
		}
		if err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func (f *field) list(b []byte, l protoreflect.List) ([]byte, error) {
	b = append(b, '[')
	var err error
	for i := range l.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		if f.sub != nil {
			b, err = f.sub.append(b, l.Get(i).Message())
		} else {
			b, err = f.enc(b, l.Get(i))
		}
		if err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// scalarEncoder returns the encoder of a scalar kind, nil for one this package leaves to protojson.
func scalarEncoder(fd protoreflect.FieldDescriptor) func([]byte, protoreflect.Value) ([]byte, error) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return func(b []byte, v protoreflect.Value) ([]byte, error) { return appendString(b, fd, v.String()) }
	case protoreflect.BoolKind:
		return func(b []byte, v protoreflect.Value) ([]byte, error) { return strconv.AppendBool(b, v.Bool()), nil }
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return func(b []byte, v protoreflect.Value) ([]byte, error) { return strconv.AppendInt(b, v.Int(), 10), nil }
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return func(b []byte, v protoreflect.Value) ([]byte, error) { return strconv.AppendUint(b, v.Uint(), 10), nil }
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		// protojson quotes 64-bit integers: JavaScript numbers cannot hold all of them.
		return func(b []byte, v protoreflect.Value) ([]byte, error) {
			return append(strconv.AppendInt(append(b, '"'), v.Int(), 10), '"'), nil
		}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return func(b []byte, v protoreflect.Value) ([]byte, error) {
			return append(strconv.AppendUint(append(b, '"'), v.Uint(), 10), '"'), nil
		}
	case protoreflect.DoubleKind:
		return func(b []byte, v protoreflect.Value) ([]byte, error) { return appendFloat(b, v.Float(), 64), nil }
	case protoreflect.FloatKind:
		return func(b []byte, v protoreflect.Value) ([]byte, error) { return appendFloat(b, v.Float(), 32), nil }
	case protoreflect.BytesKind:
		return func(b []byte, v protoreflect.Value) ([]byte, error) {
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, v.Bytes())
			return append(b, '"'), nil
		}
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		return func(b []byte, v protoreflect.Value) ([]byte, error) {
			if ev := values.ByNumber(v.Enum()); ev != nil {
				return append(append(append(b, '"'), ev.Name()...), '"'), nil
			}
			return strconv.AppendInt(b, int64(v.Enum()), 10), nil // protojson writes unknown numbers as numbers
		}
	}
	return nil
}

// appendFloat writes f as protojson does: NaN and the infinities as strings, others in the
// shortest form that reads back as f, in exponent form only for very large or small magnitudes
// (as JavaScript prints numbers).
func appendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' { // e-07 becomes e-7, as protojson writes it
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString writes s quoted and escaped. Like protojson, it refuses invalid UTF-8, which a
// proto3 string must not hold.
func appendString(b []byte, fd protoreflect.FieldDescriptor, s string) ([]byte, error) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, fmt.Errorf("pbjson: field %s holds invalid UTF-8", fd.FullName())
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}

const hex = "0123456789abcdef"
