package main

import (
	"strings"
	"testing"
)

func TestReportComparesEachVariantWithItsBaseline(t *testing.T) {
	in := `goos: linux
BenchmarkVerify/baseline-2   	   10000	     20000 ns/op	    5000 B/op
BenchmarkVerify/cached-2     	 1000000	      1000 ns/op	       0 B/op
BenchmarkOther/variant-2     	 1000000	      1000 ns/op
PASS
`
	var out strings.Builder
	if err := report(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "BenchmarkVerify") || !strings.Contains(got, "cached") || !strings.Contains(got, "ratio 0.050") {
		t.Fatalf("report = %q", got)
	}
	if strings.Contains(got, "BenchmarkOther") {
		t.Fatalf("a group without baseline was reported: %q", got)
	}
}

func TestReportFailsWithoutAnyBaseline(t *testing.T) {
	if err := report(strings.NewReader("BenchmarkX/a-2 1 5 ns/op\n"), &strings.Builder{}); err == nil {
		t.Fatal("want an error when nothing can be compared")
	}
}
