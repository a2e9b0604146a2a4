// Package chart draws a series of numbers per day as a line or bar chart in server-rendered SVG,
// with the same data as an HTML table and as CSV, for the console's analytics page.
//
// A chart needs no script and no stylesheet of its own: it is inline SVG whose viewBox scales it to
// its container (a phone's 390 px included), with role="img", a <title> and a <desc> naming it for
// screen readers, and a table beside it carrying every value. Series are told apart by dash pattern
// as well as colour, so a chart reads without colour vision. Every text that reaches the markup
// (titles, labels, series names) is escaped, with bytes XML cannot carry replaced; the CSV writer
// follows RFC 4180 and defuses cells a spreadsheet would run as a formula.
package chart
