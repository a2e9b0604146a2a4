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

func TestReportComparesRatesTheBaselineReportsToo(t *testing.T) {
	in := `BenchmarkPspxIngest/baseline-2     	   12735	    130414 ns/op	      8000 events/s	       0 B/op	       0 allocs/op
--- BENCH: BenchmarkPspxIngest/baseline-2
    bench_test.go:78: PostgreSQL fsync=on
BenchmarkPspxIngest/unique-2       	    1597	    689669 ns/op	      2000 events/s	   30645 B/op	     182 allocs/op
BenchmarkPspxIngest/duplicate-2    	   10000	    110048 ns/op	      9087 events/s	       2 MB/s
BenchmarkPspxIngest/other-2        	   10000	    110048 ns/op	      5 MB/s
`
	var out strings.Builder
	if err := report(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"unique", "2000 events/s", "8000 events/s", "ratio 0.250", "duplicate", "9087 events/s", "ratio 1.136", "ratio 5.288"} {
		if !strings.Contains(got, want) {
			t.Fatalf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "MB/s") {
		t.Fatalf("a rate the baseline does not report was compared:\n%s", got)
	}
}

func TestReportComparesNestedGroupsEachWithItsOwnBaseline(t *testing.T) {
	in := `BenchmarkLists/month/baseline-2   	  20	  60000000 ns/op	  150000 rows/s
BenchmarkLists/month/route-2      	  10	 150000000 ns/op	  2.5 MiB-peak-rss-growth	   60000 rows/s
BenchmarkLists/year/baseline-2    	   3	 400000000 ns/op	  250000 rows/s
BenchmarkLists/year/route-2       	   1	1600000000 ns/op	  62500 rows/s
`
	var out strings.Builder
	if err := report(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"BenchmarkLists/month", "ratio 2.500", "ratio 0.400", "BenchmarkLists/year", "ratio 4.000", "ratio 0.250"} {
		if !strings.Contains(got, want) {
			t.Fatalf("report lacks %q:\n%s", want, got)
		}
	}
}
