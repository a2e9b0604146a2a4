package chart

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is how a chart draws its series.
type Kind int

// The kinds of chart.
const (
	Line Kind = iota // one polyline per series
	Bar              // one bar per series and label, grouped per label
)

// Series is one named row of values, one per label of its chart.
type Series struct {
	Name   string
	Values []int64
}

// Chart is a chart of series over labels (the days).
type Chart struct {
	// ID makes the ids of the chart's title and description unique on the page; only letters,
	// digits and hyphens are kept.
	ID          string
	Kind        Kind
	Title       string
	Description string   // what the chart shows, for screen readers
	Labels      []string // the x axis, one per value
	Series      []Series
	// Format renders a value on the y axis, in the table and in the CSV (a money amount in minor
	// units as a decimal, say); nil renders the integer.
	Format func(int64) string
}

// The drawing's own coordinates; the viewBox scales them to the container. They are chosen for
// a phone: at 390 px wide the text is still about 10 px high, and four day labels fit side by side.
const (
	width, height            = 480.0, 240.0
	left, right, top, bottom = 64.0, 10.0, 10.0, 44.0 // margins holding the axes' labels
	fontSize                 = 14
	maxXLabels               = 4
	targetYTicks             = 5
)

// palette and dashes tell up to four series apart; more reuse them.
var (
	palette = []string{"#1f5fbf", "#c2410c", "#15803d", "#7e22ce"}
	dashes  = []string{"", "6 3", "2 3", "8 3 2 3"}
)

func (c Chart) format(v int64) string {
	if c.Format == nil {
		return strconv.FormatInt(v, 10)
	}
	return c.Format(v)
}

// SVG renders the chart as inline SVG. Values beyond the labels are not drawn; labels beyond a
// series' values draw as zero.
func (c Chart) SVG() template.HTML {
	id := safeID(c.ID)
	lo, hi := c.bounds()
	ticks := Ticks(lo, hi, targetYTicks)
	lo, hi = min(lo, ticks[0]), max(hi, ticks[len(ticks)-1])
	plotW, plotH := width-left-right, height-top-bottom
	y := func(v int64) float64 {
		if hi == lo {
			return top + plotH
		}
		return top + plotH - float64(v-lo)/float64(hi-lo)*plotH
	}
	n := len(c.Labels)
	slot := plotW / float64(max(n, 1))
	x := func(i int) float64 { return left + slot*(float64(i)+0.5) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %g %g" width="100%%" role="img" aria-labelledby="%s-title %s-desc" font-size="%d" font-family="system-ui,sans-serif">`,
		width, height, id, id, fontSize)
	fmt.Fprintf(&b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, id, text(c.Title), id, text(c.Description))
	// The y axis: a grid line and a label per tick.
	for _, t := range ticks {
		ty := y(t)
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#d4d4d8"/>`, left, width-right, ty, ty)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="#3f3f46">%s</text>`, left-6, ty, text(c.format(t)))
	}
	// The x axis: at most maxXLabels labels, the first and the last among them.
	fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="#52525b"/>`, left, width-right, top+plotH, top+plotH)
	for _, i := range labelIndexes(n, maxXLabels) {
		// The outer labels align with the plot's edges so they are not cut off.
		anchor, lx := "middle", x(i)
		switch {
		case n > 1 && i == 0:
			anchor, lx = "start", left
		case n > 1 && i == n-1:
			anchor, lx = "end", width-right
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="%s" fill="#3f3f46">%s</text>`, lx, top+plotH+18, anchor, text(c.Labels[i]))
	}
	// The series.
	for si, s := range c.Series {
		colour, dash := palette[si%len(palette)], dashes[si%len(dashes)]
		switch c.Kind {
		case Bar:
			group := slot * 0.8
			barW := group / float64(len(c.Series))
			fmt.Fprintf(&b, `<g fill="%s">`, colour)
			for i := range n {
				v := valueAt(s.Values, i)
				top, base := y(max(v, 0)), y(min(v, 0))
				bx := left + slot*float64(i) + (slot-group)/2 + barW*float64(si)
				fmt.Fprintf(&b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f"/>`, bx, top, barW, base-top)
			}
			b.WriteString(`</g>`)
		default:
			var pts strings.Builder
			for i := range n {
				fmt.Fprintf(&pts, "%.1f,%.1f ", x(i), y(valueAt(s.Values, i)))
			}
			dashAttr := ""
			if dash != "" {
				dashAttr = ` stroke-dasharray="` + dash + `"`
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s stroke-linejoin="round"/>`, strings.TrimSpace(pts.String()), colour, dashAttr)
		}
	}
	// A legend when there is more than one series to tell apart.
	if len(c.Series) > 1 {
		lx := left
		for si, s := range c.Series {
			colour, dash := palette[si%len(palette)], dashes[si%len(dashes)]
			dashAttr := ""
			if dash != "" && c.Kind == Line {
				dashAttr = ` stroke-dasharray="` + dash + `"`
			}
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="%s" stroke-width="4"%s/>`, lx, lx+18, height-8, height-8, colour, dashAttr)
			name := text(s.Name)
			fmt.Fprintf(&b, `<text x="%.1f" y="%g" dominant-baseline="middle" fill="#18181b">%s</text>`, lx+22, height-8, name)
			lx += 22 + float64(utf8.RuneCountInString(s.Name))*fontSize*0.6 + 16
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec G203 -- numbers and escaped text only
}

// bounds are the smallest and largest value drawn, zero included (bars and counts start at 0).
func (c Chart) bounds() (lo, hi int64) {
	for _, s := range c.Series {
		for i := range len(c.Labels) {
			v := valueAt(s.Values, i)
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return lo, hi
}

func valueAt(values []int64, i int) int64 {
	if i < len(values) {
		return values[i]
	}
	return 0
}

// Ticks are round values for an axis from lo to hi: about target of them, a step of 1, 2 or 5
// times a power of ten, the first at or below lo and the last at or above hi. An axis of zeros
// gets the ticks 0 and 1, so an empty chart still has a scale.
func Ticks(lo, hi int64, target int) []int64 {
	if hi <= lo {
		hi = lo + 1
	}
	target = max(target, 2)
	raw := float64(hi-lo) / float64(target-1)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := int64(mag)
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = int64(m * mag)
			break
		}
	}
	step = max(step, 1)
	first := floorDiv(lo, step) * step
	var out []int64
	for v := first; ; v += step {
		out = append(out, v)
		if v >= hi {
			return out
		}
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// labelIndexes picks at most limit evenly spaced indexes of n labels, the first and the last
// included.
func labelIndexes(n, limit int) []int {
	if n <= limit {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, limit)
	for k := range out {
		out[k] = k * (n - 1) / (limit - 1)
	}
	return out
}

// safeID keeps the letters, digits and hyphens of id; "chart" when none remain.
func safeID(id string) string {
	out := strings.Map(func(r rune) rune {
		if r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return -1
	}, id)
	if out == "" || out[0] == '-' || (out[0] >= '0' && out[0] <= '9') {
		out = "chart-" + out
	}
	return out
}

// text escapes s for SVG or HTML text and attributes, first replacing what XML cannot carry (bytes
// that are not UTF-8, control characters but tab and newline, non-characters) with U+FFFD.
func text(s string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n':
			return r
		case r < 0x20, r >= 0x7f && r < 0xa0, r == utf8.RuneError, r == 0xfffe, r == 0xffff, r >= 0xd800 && r < 0xe000:
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return template.HTMLEscapeString(clean)
}

// Decimal renders minor units with places decimals (1234 with 2: "12.34"), as money's amounts
// are; places 0 renders the integer.
func Decimal(places int) func(int64) string {
	unit := int64(math.Pow10(places))
	return func(v int64) string {
		if places <= 0 {
			return strconv.FormatInt(v, 10)
		}
		sign := ""
		u := uint64(v)
		if v < 0 {
			sign, u = "-", uint64(-v)
		}
		return fmt.Sprintf("%s%d.%0*d", sign, u/uint64(unit), places, u%uint64(unit))
	}
}
