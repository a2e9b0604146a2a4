package chart

import (
	"encoding/xml"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestTicksAreRoundStepsCoveringTheValues(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi int64
		want   []int64
	}{
		{"an axis of zeros still has a scale", 0, 0, []int64{0, 1}},
		{"small counts step by one", 0, 3, []int64{0, 1, 2, 3}},
		{"a top between steps is covered", 0, 7, []int64{0, 2, 4, 6, 8}},
		{"hundreds", 0, 420, []int64{0, 200, 400, 600}},
		{"money in minor units", 0, 123456, []int64{0, 50000, 100000, 150000}},
		{"negative values start below them", -30, 70, []int64{-50, 0, 50, 100}},
		{"a round top is the last tick", 0, 100, []int64{0, 50, 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Ticks(tc.lo, tc.hi, 5); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Ticks(%d, %d) = %v, want %v", tc.lo, tc.hi, got, tc.want)
			}
		})
	}
}

func TestAtMostNDayLabelsShowTheFirstAndTheLast(t *testing.T) {
	tests := []struct {
		n    int
		want []int
	}{
		{0, []int{}},
		{1, []int{0}},
		{7, []int{0, 1, 2, 3, 4, 6}},
		{30, []int{0, 5, 11, 17, 23, 29}},
		{365, []int{0, 72, 145, 218, 291, 364}},
	}
	for _, tc := range tests {
		if got := labelIndexes(tc.n, 6); !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("labelIndexes(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}

// element is an SVG element as parsed back.
type element struct {
	name  string
	attrs map[string]string
	text  string
}

// parse reads markup back as XML, failing the test when it is not well formed.
func parse(t *testing.T, markup string) []element {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(markup))
	var out []element
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, markup)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
		case xml.CharData:
			if len(out) > 0 {
				out[len(out)-1].text += string(tok)
			}
		}
	}
}

func byName(els []element, name string) []element {
	var out []element
	for _, e := range els {
		if e.name == name {
			out = append(out, e)
		}
	}
	return out
}

func week() Chart {
	return Chart{
		ID: "sign-ins", Title: "Sign-ins per day", Description: "Sign-ins and active users per day",
		Labels: []string{"2026-03-04", "2026-03-05", "2026-03-06", "2026-03-07", "2026-03-08", "2026-03-09", "2026-03-10"},
		Series: []Series{{Name: "Sign-ins", Values: []int64{3, 0, 5, 1, 0, 0, 7}}, {Name: "Active users", Values: []int64{2, 0, 4, 1, 0, 0, 3}}},
	}
}

func TestALineChartIsAnAccessibleScalableImage(t *testing.T) {
	els := parse(t, string(week().SVG()))
	svg := els[0]
	if svg.name != "svg" || svg.attrs["role"] != "img" || svg.attrs["viewBox"] != "0 0 480 240" || svg.attrs["width"] != "100%" || svg.attrs["height"] != "" {
		t.Fatalf("root %+v: want a role=img svg scaled by its viewBox", svg)
	}
	if svg.attrs["aria-labelledby"] != "sign-ins-title sign-ins-desc" {
		t.Fatalf("aria-labelledby = %q", svg.attrs["aria-labelledby"])
	}
	title, desc := byName(els, "title"), byName(els, "desc")
	if len(title) != 1 || title[0].attrs["id"] != "sign-ins-title" || title[0].text != "Sign-ins per day" ||
		len(desc) != 1 || desc[0].attrs["id"] != "sign-ins-desc" || desc[0].text != "Sign-ins and active users per day" {
		t.Fatalf("title %+v, desc %+v", title, desc)
	}
	lines := byName(els, "polyline")
	if len(lines) != 2 {
		t.Fatalf("%d polylines, want one per series", len(lines))
	}
	if pts := strings.Fields(lines[0].attrs["points"]); len(pts) != 7 {
		t.Fatalf("%d points, want one per day: %v", len(pts), pts)
	}
	if lines[0].attrs["stroke-dasharray"] == lines[1].attrs["stroke-dasharray"] {
		t.Fatal("two series differ only by colour")
	}
	var texts []string
	for _, e := range byName(els, "text") {
		texts = append(texts, e.text)
	}
	// The y axis's ticks (0 to 8 by 2), the first and last days, the legend.
	for _, want := range []string{"0", "8", "2026-03-04", "2026-03-10", "Sign-ins", "Active users"} {
		found := false
		for _, got := range texts {
			found = found || got == want
		}
		if !found {
			t.Fatalf("no text %q among %q", want, texts)
		}
	}
}

func TestABarChartDrawsOneBarPerSeriesAndDay(t *testing.T) {
	c := week()
	c.Kind = Bar
	bars := byName(parse(t, string(c.SVG())), "rect")
	if len(bars) != 14 {
		t.Fatalf("%d bars, want 14", len(bars))
	}
	// The 7 of the last day is the highest bar; a zero has no height.
	if bars[6].attrs["height"] == "0.0" || bars[1].attrs["height"] != "0.0" {
		t.Fatalf("bars %+v", bars[:7])
	}
}

func TestTextReachingTheMarkupIsEscapedAndCleaned(t *testing.T) {
	c := Chart{
		ID: `x" onload="alert(1)`, Title: `<script>alert(1)</script>`, Description: "a\x00b\x1bc\xff",
		Labels: []string{`"&'<>`}, Series: []Series{{Name: "</svg><img src=x>", Values: []int64{1}}, {Name: "b"}},
	}
	markup := string(c.SVG()) + string(c.Table("Day").HTML())
	els := parse(t, "<root>"+markup+"</root>")
	for _, e := range els {
		if e.name == "script" || e.name == "img" {
			t.Fatalf("markup injected a %s element: %s", e.name, markup)
		}
	}
	if got := els[1].attrs["aria-labelledby"]; got != "xonloadalert1-title xonloadalert1-desc" {
		t.Fatalf("aria-labelledby = %q", got)
	}
	if desc := byName(els, "desc")[0].text; desc != "a\uFFFDb\uFFFDc\uFFFD" {
		t.Fatalf("desc = %q", desc)
	}
}

func TestIDsAreSafeAndStartWithALetter(t *testing.T) {
	for in, want := range map[string]string{"revenue-eur": "revenue-eur", "": "chart-", "7days": "chart-7days", "-x": "chart--x", "a b/c": "abc"} {
		if got := safeID(in); got != want {
			t.Fatalf("safeID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecimalRendersMinorUnits(t *testing.T) {
	tests := []struct {
		places int
		v      int64
		want   string
	}{
		{2, 1234, "12.34"}, {2, 5, "0.05"}, {2, 0, "0.00"}, {2, -1234, "-12.34"}, {0, 1234, "1234"}, {3, 1000, "1.000"},
		{2, -9223372036854775808, "-92233720368547758.08"},
	}
	for _, tc := range tests {
		if got := Decimal(tc.places)(tc.v); got != tc.want {
			t.Fatalf("Decimal(%d)(%d) = %q, want %q", tc.places, tc.v, got, tc.want)
		}
	}
}
