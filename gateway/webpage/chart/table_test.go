package chart

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

func TestTheTableCarriesTheSameDataAsTheChart(t *testing.T) {
	c := week()
	c.Format = Decimal(2)
	tb := c.Table("Day")
	if strings.Join(tb.Columns, "|") != "Day|Sign-ins|Active users" || len(tb.Rows) != 7 ||
		strings.Join(tb.Rows[6], "|") != "2026-03-10|0.07|0.03" {
		t.Fatalf("table %+v", tb)
	}
	els := parse(t, string(tb.HTML()))
	if els[0].name != "table" || byName(els, "caption")[0].text != "Sign-ins per day" {
		t.Fatalf("table markup %+v", els[:2])
	}
	var cols, rows int
	for _, th := range byName(els, "th") {
		switch th.attrs["scope"] {
		case "col":
			cols++
		case "row":
			rows++
		}
	}
	if cols != 3 || rows != 7 || len(byName(els, "td")) != 14 {
		t.Fatalf("%d column headers, %d row headers, %d cells", cols, rows, len(byName(els, "td")))
	}
}

func TestCSVFollowsRFC4180AndDefusesFormulas(t *testing.T) {
	tests := []struct {
		name string
		cell string
		want string // the cell as written, between the header line and CRLF
	}{
		{"a plain cell", "2026-03-04", "2026-03-04"},
		{"a number", "12.50", "12.50"},
		{"a negative number stays a number", "-12.50", "-12.50"},
		{"a formula", "=HYPERLINK(\"x\")", `"'=HYPERLINK(""x"")"`},
		{"a plus", "+1+1", "'+1+1"},
		{"a minus that is no number", "-2+3", "'-2+3"},
		{"an at", "@SUM(A1)", "'@SUM(A1)"},
		{"a tab", "\t=1", "'\t=1"},
		{"a carriage return is a line break", "\r=1", "\"'\r\n=1\""},
		{"a line break first", "\n=1", "\"'\r\n=1\""},
		{"a comma is quoted", "a,b", `"a,b"`},
		{"a quote is doubled", `say "hi"`, `"say ""hi"""`},
		{"a line break is quoted", "a\nb", "\"a\r\nb\""},
		{"an empty cell", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := (Table{Columns: []string{"Day"}, Rows: [][]string{{tc.cell}}}).WriteCSV(&b); err != nil {
				t.Fatal(err)
			}
			if want := "Day\r\n" + tc.want + "\r\n"; b.String() != want {
				t.Fatalf("CSV %q, want %q", b.String(), want)
			}
		})
	}
}

// FuzzCSVReadsBackAsTheDefusedCells holds that whatever the cells (names and labels come from
// apps' data), the CSV parses back into the same rows, each cell as written or defused, and no cell
// reads as a formula.
func FuzzCSVReadsBackAsTheDefusedCells(f *testing.F) {
	for _, seed := range [][2]string{{"Day", "1"}, {"=1+1", "a,b"}, {"\"\r\n", "-5"}, {"@x\t", "\xff"}, {"", "\r"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		in := Table{Columns: []string{"Day", a}, Rows: [][]string{{b, a}, {"", b}}}
		var buf bytes.Buffer
		if err := in.WriteCSV(&buf); err != nil {
			t.Fatalf("WriteCSV: %v", err)
		}
		r := csv.NewReader(&buf)
		r.FieldsPerRecord = 2
		got, err := r.ReadAll()
		if err != nil {
			t.Fatalf("the CSV does not parse: %v\n%q", err, buf.String())
		}
		want := append([][]string{in.Columns}, in.Rows...)
		if len(got) != len(want) {
			t.Fatalf("%d records, want %d", len(got), len(want))
		}
		for i := range want {
			for j, cell := range want[i] {
				if got[i][j] != csvCell(cell) {
					t.Fatalf("cell %d,%d = %q, want %q", i, j, got[i][j], csvCell(cell))
				}
				if c := got[i][j]; c != "" && strings.ContainsRune("=+@\t\r\n", rune(c[0])) {
					t.Fatalf("cell %q reads as a formula", c)
				}
			}
		}
	})
}

// FuzzSVGIsWellFormed holds that any title, label or series name yields well-formed markup with
// exactly the elements the chart draws.
func FuzzSVGIsWellFormed(f *testing.F) {
	f.Add("Sign-ins", "2026-03-04", "<b>", int64(3))
	f.Add("</svg>", "\x00", "]]>", int64(-7))
	f.Fuzz(func(t *testing.T, title, label, name string, v int64) {
		c := Chart{ID: name, Title: title, Description: title, Labels: []string{label, label}, Series: []Series{{Name: name, Values: []int64{v, v / 2}}, {Name: label}}}
		for _, kind := range []Kind{Line, Bar} {
			c.Kind = kind
			els := parse(t, "<root>"+string(c.SVG())+string(c.Table(label).HTML())+"</root>")
			allowed := map[string]bool{"root": true, "svg": true, "title": true, "desc": true, "line": true, "text": true, "polyline": true,
				"g": true, "rect": true, "table": true, "caption": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true}
			for _, e := range els {
				if !allowed[e.name] {
					t.Fatalf("unexpected element %q", e.name)
				}
			}
		}
	})
}
