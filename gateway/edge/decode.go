package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/berthhq/berth/gateway/pbjson"
	"github.com/berthhq/berth/pkg/text"
)

// jsonMarshaler is the mux's marshaler: protojson as configured in marshaler, with a decoder whose
// errors name the field or rule that failed instead of carrying parser text. The runtime turns a
// decoder error into InvalidArgument with the error's text; the decoder also records the failure
// on the request's input (see trackedBody) so the answer carries the field in `validation`.
type jsonMarshaler struct {
	*runtime.JSONPb
}

// Marshal writes a body the edge encoded itself (the /v1 envelope) as it is, a message (the
// /api/v1 family's bodies) with pbjson, which renders what protojson would, faster, and anything
// else with the runtime's own marshaler.
func (m jsonMarshaler) Marshal(v any) ([]byte, error) {
	switch b := v.(type) {
	case encodedJSON:
		return b, nil
	case proto.Message:
		return pbjson.Append(nil, b)
	}
	return m.JSONPb.Marshal(v)
}

func (m jsonMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		err := m.decode(r, v)
		var bad *badBody
		if errors.As(err, &bad) {
			if tb, ok := r.(*trackedBody); ok && tb.in.refused == nil {
				tb.in.refused = badInput(bad.field, bad.message)
			}
		}
		return err
	})
}

// badBody is a refused body: field is the JSON path as sent ("tenant.shippingAddress.line1") or
// "body" for the body as a whole.
type badBody struct{ field, message string }

func (b *badBody) Error() string { return b.message }

func refuseBody(field, format string, args ...any) *badBody {
	return &badBody{field: field, message: fmt.Sprintf(format, args...)}
}

func (m jsonMarshaler) decode(r io.Reader, v any) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return refuseBody("body", "body: larger than 1 MiB")
		}
		return refuseBody("body", "body: incomplete (the connection ended before the body did)")
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return io.EOF // no body: the runtime leaves the message empty, as it always has
	}
	decodeErr := m.JSONPb.NewDecoder(bytes.NewReader(raw)).Decode(v)
	if decodeErr == nil {
		return nil
	}
	return diagnose(raw, v)
}

// diagnose names what is wrong with a body the decoder refused. Only the body's own bytes and the
// target message's descriptor are used: the decoder's text never reaches the caller.
func diagnose(raw []byte, v any) error {
	if !json.Valid(raw) {
		return refuseBody("body", "body: not valid JSON")
	}
	if !utf8.Valid(raw) {
		field := invalidUTF8Path(raw)
		return refuseBody(field, "%s %s", field, text.MsgInvalidUTF8)
	}
	target := targetMessage(v)
	if target == nil {
		return refuseBody("body", "body: not valid for this request")
	}
	if first := firstNonSpace(raw); first != '{' {
		return refuseBody("body", "body: must be a JSON object")
	}
	if field, msg := badMember(target.ProtoReflect().Descriptor(), raw, ""); field != "" {
		return refuseBody(field, "%s: %s", field, msg)
	}
	return refuseBody("body", "body: not valid for this request")
}

func firstNonSpace(b []byte) byte {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// targetMessage is a fresh message of the type the runtime decodes into: the request itself, or
// (for a body bound to one field, like route 17's patch) a pointer to that field's message.
func targetMessage(v any) proto.Message {
	if m, ok := v.(proto.Message); ok {
		return m.ProtoReflect().Type().New().Interface()
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && rv.Type().Elem().Kind() == reflect.Pointer {
		if m, ok := reflect.New(rv.Type().Elem().Elem()).Interface().(proto.Message); ok {
			return m
		}
	}
	return nil
}

type member struct {
	key   string
	value json.RawMessage
}

// members returns an object's members in the order sent; ok is false when raw is not an object.
func members(raw []byte) (out []member, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, false
		}
		out = append(out, member{key, value})
	}
	return out, true
}

// badMember finds the first member of the object raw that the message md refuses on its own, and
// says what its value must be. It descends into nested objects so the path names the innermost
// field ("tenant.billingAddress.country").
func badMember(md protoreflect.MessageDescriptor, raw []byte, prefix string) (field, msg string) {
	ms, ok := members(raw)
	if !ok {
		return "", ""
	}
	seen := map[protoreflect.FieldNumber]bool{}
	for _, m := range ms {
		fd := md.Fields().ByJSONName(m.key)
		if fd == nil {
			fd = md.Fields().ByTextName(m.key)
		}
		if fd == nil {
			continue // unknown fields are ignored, never refused
		}
		name := prefix + m.key
		if seen[fd.Number()] {
			return name, "given more than once"
		}
		seen[fd.Number()] = true
		if memberDecodes(md, m) {
			continue
		}
		if fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() && firstNonSpace(m.value) == '{' {
			if inner, innerMsg := badMember(fd.Message(), m.value, name+"."); inner != "" {
				return inner, innerMsg
			}
		}
		return name, expectation(fd)
	}
	return "", ""
}

// memberDecodes reports whether {"key": value} alone decodes into a fresh message of md's type.
func memberDecodes(md protoreflect.MessageDescriptor, m member) bool {
	key, _ := json.Marshal(m.key)
	one := append(append(append([]byte("{"), key...), ':'), m.value...)
	one = append(one, '}')
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(one, newMessage(md)) == nil
}

// expectation says what a field's JSON value must be.
func expectation(fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.IsMap():
		return "must be an object"
	case fd.IsList():
		return "must be an array of " + strings.TrimPrefix(kindName(fd), "a ") + "s"
	}
	return "must be " + kindName(fd)
}

func kindName(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return "a string"
	case protoreflect.BoolKind:
		return "a boolean"
	case protoreflect.EnumKind:
		return "a known value"
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return "an object"
	case protoreflect.BytesKind:
		return "a base64 string"
	default:
		return "a number"
	}
}

// invalidUTF8Path is the JSON path of the first string (member name or value) that is not valid
// UTF-8, "body" when it is not inside a member. The decoder replaces such bytes silently, so the raw
// bytes between two tokens are what is checked.
func invalidUTF8Path(raw []byte) string {
	type frame struct {
		object bool
		key    string
		index  int
		atKey  bool // an object's next string token is a member name
	}
	var stack []frame
	path := func(key string) string {
		var b strings.Builder
		for _, f := range stack {
			if f.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				fmt.Fprintf(&b, "[%d]", f.index)
			}
		}
		if key != "" {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(key)
		}
		if b.Len() == 0 {
			return "body"
		}
		return b.String()
	}
	// A value ends: its container moves on to the next member name or element.
	next := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].atKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var prev int64
	for {
		tok, err := dec.Token()
		if err != nil {
			return "body"
		}
		off := dec.InputOffset()
		chunk := raw[prev:off]
		prev = off
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{object: true, atKey: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				next()
			}
		case string:
			top := len(stack) - 1
			if top >= 0 && stack[top].object && stack[top].atKey {
				if !utf8.Valid(chunk) {
					stack = stack[:top] // the member name itself is bad: name its object
					return path("")
				}
				stack[top].key, stack[top].atKey = t, false
				continue
			}
			if !utf8.Valid(chunk) {
				return path("")
			}
			next()
		default:
			next()
		}
	}
}

// newMessage is an empty message of md's type: the generated one when linked in, a dynamic one
// otherwise (protojson decodes both alike).
func newMessage(md protoreflect.MessageDescriptor) proto.Message {
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
		return mt.New().Interface()
	}
	return dynamicpb.NewMessage(md)
}
