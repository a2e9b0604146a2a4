package pspx

import (
	"net/url"
	"strings"
	"testing"
)

func TestFormEncodesNestedKeysSortedWhateverTheInsertionOrder(t *testing.T) {
	build := func(order []string) string {
		f := newForm()
		for _, k := range order {
			switch k {
			case "meta":
				f.meta("metadata", map[string]string{"tenantId": "t 1", "appId": "a&b"})
			case "line":
				f.set("line_items[0][price]", "price_1")
			case "clear":
				f.set("invoice_settings[default_payment_method]", "")
			case "skip":
				f.opt("footer", "")
				f.positive("quantity", 0)
			}
		}
		body, err := f.encode()
		if err != nil {
			t.Fatal(err)
		}
		return body
	}
	a := build([]string{"meta", "line", "clear", "skip"})
	b := build([]string{"skip", "clear", "line", "meta"})
	want := "invoice_settings%5Bdefault_payment_method%5D=&line_items%5B0%5D%5Bprice%5D=price_1&metadata%5BappId%5D=a%26b&metadata%5BtenantId%5D=t+1"
	if a != want || b != want {
		t.Fatalf("bodies\n%s\n%s\nwant\n%s", a, b, want)
	}
}

func TestPercentagesAreSentWithAtMostFourDecimals(t *testing.T) {
	for in, want := range map[float64]string{19: "19", 7.25: "7.25", 0.1 + 0.2: "0.3", 12.34567: "12.3457", 0: "0"} {
		f := newForm()
		f.percent("p", in)
		if got := f.vals.Get("p"); got != want {
			t.Errorf("%v sent as %q, want %q", in, got, want)
		}
	}
}

func TestMetadataKeysThatWouldReadAsNestingAreRefused(t *testing.T) {
	for _, k := range []string{"", "a[b]", "x]", "[y"} {
		f := newForm()
		f.meta("metadata", map[string]string{k: "v"})
		if _, err := f.encode(); err == nil {
			t.Errorf("key %q accepted", k)
		}
	}
}

// FuzzFormMetadata: any metadata either is refused or decodes back to exactly what was sent.
func FuzzFormMetadata(f *testing.F) {
	f.Add("tenantId", "t1", "appId", "")
	f.Add("a b", "%zz&=", "ü", "[")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		m := map[string]string{k1: v1, k2: v2}
		fm := newForm()
		fm.meta("metadata", m)
		body, err := fm.encode()
		bad := func(k string) bool { return k == "" || strings.ContainsAny(k, "[]") }
		if err != nil {
			if !bad(k1) && !bad(k2) {
				t.Fatalf("refused %q", m)
			}
			return
		}
		got, perr := url.ParseQuery(body)
		if perr != nil || len(got) != len(m) {
			t.Fatalf("%q encoded as %q: %v", m, body, perr)
		}
		for k, v := range m {
			if vs := got["metadata["+k+"]"]; len(vs) != 1 || vs[0] != v {
				t.Fatalf("%q→%q came back as %q", k, v, vs)
			}
		}
	})
}
