package pbjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/berthhq/berth/gateway/pbjson"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	_ "github.com/berthhq/berth/proto/registry" // every context's messages
)

var reference = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// tricky are strings that stress escaping: quotes, backslashes, every control character class,
// non-ASCII letters, emoji, the JavaScript line separators, and HTML characters.
var tricky = []string{"", "plain", `a"b`, `back\slash`, "tab\there", "line\nbreak\r\n", "\x00\x01\x1f\x7f", "\b\f",
	"Grüße, Œuvre", "日本語", "emoji 🚀", "sep\u2028\u2029", "<script>&amp;</script>", strings.Repeat("x", 300)}

// fill sets every field of m (nested messages to depth 3) from r, so unset and set fields of
// every kind occur across runs.
func fill(r *rand.Rand, m protoreflect.Message, depth int) {
	fds := m.Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if fd.ContainingOneof() != nil && r.IntN(2) == 0 {
			continue
		}
		if r.IntN(4) == 0 {
			continue // leave it unset
		}
		switch {
		case fd.IsMap():
			continue
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range r.IntN(3) {
				if fd.Kind() == protoreflect.MessageKind {
					if depth == 0 {
						break
					}
					v := l.NewElement()
					fill(r, v.Message(), depth-1)
					l.Append(v)
				} else {
					l.Append(scalar(r, fd))
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			if depth > 0 && fd.Message().FullName().Parent() != "google.protobuf" {
				fill(r, m.Mutable(fd).Message(), depth-1)
			}
		default:
			m.Set(fd, scalar(r, fd))
		}
	}
}

func scalar(r *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	floats := []float64{0, 1, -1.5, 1700000000, 0.1, 1e-7, 3.14159e-12, 1e21, 1.5e300, -2e22, 123456789012345, math.MaxFloat64, math.SmallestNonzeroFloat64}
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(tricky[r.IntN(len(tricky))])
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32([]int32{0, 1, -1, math.MaxInt32, math.MinInt32}[r.IntN(5)])
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32([]uint32{0, 7, math.MaxUint32}[r.IntN(3)])
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64([]int64{0, -3, math.MaxInt64, math.MinInt64}[r.IntN(4)])
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64([]uint64{0, 9, math.MaxUint64}[r.IntN(3)])
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(floats[r.IntN(len(floats))])
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32([]float64{0, 1.5, -0.25, 1e-8, 3e22}[r.IntN(5)]))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(tricky[r.IntN(len(tricky))]))
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		if r.IntN(5) == 0 {
			return protoreflect.ValueOfEnum(99) // a number the enum does not name
		}
		return protoreflect.ValueOfEnum(values.Get(r.IntN(values.Len())).Number())
	}
	panic("unhandled kind " + fd.Kind().String())
}

// tokens reads a JSON document as its token sequence: keys in order, numbers as written.
func tokens(t *testing.T, raw []byte) []any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out []any
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("not JSON: %v\n%s", err, raw)
		}
		out = append(out, tok)
	}
}

// Every message of Berth's APIs renders to exactly protojson's tokens (keys, order, values).
func TestAppendRendersWhatProtojsonRenders(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 0
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		if !strings.HasPrefix(string(mt.Descriptor().FullName()), "berth.") {
			return true
		}
		n++
		for range 40 {
			m := mt.New()
			fill(r, m, 3)
			want, err := reference.Marshal(m.Interface())
			if err != nil {
				t.Fatalf("%s: protojson: %v", mt.Descriptor().FullName(), err)
			}
			got, err := pbjson.Append(nil, m.Interface())
			if err != nil {
				t.Fatalf("%s: %v", mt.Descriptor().FullName(), err)
			}
			if g, w := tokens(t, got), tokens(t, want); !reflect.DeepEqual(g, w) {
				t.Fatalf("%s:\n got %s\nwant %s", mt.Descriptor().FullName(), got, want)
			}
		}
		return true
	})
	if n < 50 {
		t.Fatalf("compared %d message types: the proto packages are not registered", n)
	}
}

func TestAppendAppendsToTheBuffer(t *testing.T) {
	got, err := pbjson.Append([]byte("prefix:"), &analyticsv1.ListHead{Kind: "k", ItemsLength: 2})
	if err != nil || string(got) != `prefix:{"kind":"k","itemsLength":2}` {
		t.Fatalf("Append = %s, %v", got, err)
	}
}

func TestInvalidUTF8IsRefusedAsProtojsonRefusesIt(t *testing.T) {
	m := &analyticsv1.ListHead{Kind: "bad \xff byte"}
	if _, err := pbjson.Append(nil, m); err == nil {
		t.Fatal("rendered invalid UTF-8")
	}
	if _, err := reference.Marshal(m); err == nil {
		t.Fatal("protojson rendered invalid UTF-8: the two now differ")
	}
}

func TestWellKnownTypesAreLeftToProtojson(t *testing.T) {
	s, err := structpb.NewStruct(map[string]any{"a": 1.5, "b": []any{"x", true}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := pbjson.Append(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := reference.Marshal(s)
	if !reflect.DeepEqual(tokens(t, got), tokens(t, want)) {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range tricky {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := &analyticsv1.ListHead{Kind: s}
		want, werr := reference.Marshal(m)
		got, gerr := pbjson.Append(nil, m)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("protojson error %v, pbjson error %v", werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(tokens(t, got), tokens(t, want)) {
			t.Fatalf("got %s, want %s", got, want)
		}
	})
}

func BenchmarkAppend(b *testing.B) {
	m := (&analyticsv1.Subscription{}).ProtoReflect()
	fill(rand.New(rand.NewPCG(3, 4)), m, 3)
	msg := m.Interface()
	b.Run("baseline", func(b *testing.B) { // protojson, which Append replaces
		for b.Loop() {
			if _, err := reference.Marshal(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pbjson", func(b *testing.B) {
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			var err error
			if buf, err = pbjson.Append(buf[:0], msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
