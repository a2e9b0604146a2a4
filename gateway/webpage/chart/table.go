package chart

import (
	"encoding/csv"
	"html/template"
	"io"
	"regexp"
	"strings"
)

// Table is a chart's data as rows: the labels' column, then one column per series.
type Table struct {
	Caption string
	Columns []string
	Rows    [][]string
}

// Table is the chart's data, with labelColumn naming the labels' column ("Day").
func (c Chart) Table(labelColumn string) Table {
	t := Table{Caption: c.Title, Columns: []string{labelColumn}}
	for _, s := range c.Series {
		t.Columns = append(t.Columns, s.Name)
	}
	for i, l := range c.Labels {
		row := []string{l}
		for _, s := range c.Series {
			row = append(row, c.format(valueAt(s.Values, i)))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// HTML renders the table with its caption, column headers and a row header per label.
func (t Table) HTML() template.HTML {
	var b strings.Builder
	b.WriteString(`<table class="chart-data"><caption>` + text(t.Caption) + `</caption><thead><tr>`)
	for _, c := range t.Columns {
		b.WriteString(`<th scope="col">` + text(c) + `</th>`)
	}
	b.WriteString(`</tr></thead><tbody>`)
	for _, row := range t.Rows {
		b.WriteString(`<tr>`)
		for i, cell := range row {
			if i == 0 {
				b.WriteString(`<th scope="row">` + text(cell) + `</th>`)
			} else {
				b.WriteString(`<td>` + text(cell) + `</td>`)
			}
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</tbody></table>`)
	return template.HTML(b.String()) // #nosec G203 -- escaped text only
}

// WriteCSV writes the columns and then the rows as RFC 4180 CSV (CRLF line ends, also for a line
// break inside a cell, which is then quoted like a cell holding a comma or a quote). A cell a
// spreadsheet would read as a formula (starting with =, +, -, @, a tab or a line break) is prefixed
// with an apostrophe, unless it is a plain number such as -12.50.
func (t Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	record := make([]string, 0, len(t.Columns))
	for _, row := range append([][]string{t.Columns}, t.Rows...) {
		record = record[:0]
		for _, cell := range row {
			record = append(record, csvCell(cell))
		}
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

var plainNumber = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// lineBreaks are the line breaks a cell may hold; the writer ends each line with CRLF.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// csvCell is a cell as WriteCSV writes it: its line breaks one LF each (a lone CR would otherwise
// be lost), made inert in a spreadsheet (OWASP's advice on CSV injection).
func csvCell(cell string) string {
	cell = lineBreaks.Replace(cell)
	if cell == "" || !strings.ContainsRune("=+-@\t\n", rune(cell[0])) || plainNumber.MatchString(cell) {
		return cell
	}
	return "'" + cell
}
