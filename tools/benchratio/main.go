// Command benchratio reads `go test -bench` output on stdin and prints, for every benchmark with a
// `baseline` sub-benchmark, how each sibling compares with that baseline measured in the same run
// (ns/op ratio; below 1 is faster). A rate both report with b.ReportMetric in the same unit ending
// in "/s" (events/s, say, where the baseline is an external tool's own count, such as pgbench's
// tps) is compared too, as the sibling's rate over the baseline's (above 1 is faster). `make bench`
// pipes every module's benchmarks through it, so a number is never read without the baseline it
// should be judged against.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

func main() {
	if err := report(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
}

// result is one benchmark line: BenchmarkGroup/variant-N  iterations  ns/op  [value unit]...
type result struct {
	group, variant string
	nsPerOp        float64
	rates          map[string]float64 // reported metrics whose unit ends in "/s", by unit
}

func parse(line string) (result, bool) {
	fields := strings.Fields(line)
	if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") || fields[3] != "ns/op" {
		return result{}, false
	}
	name := fields[0]
	if i := strings.LastIndex(name, "-"); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i] // drop the GOMAXPROCS suffix
		}
	}
	// The variant is the last level, so a benchmark can hold several compared groups
	// (BenchmarkX/month/baseline beside BenchmarkX/month/route).
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return result{}, false
	}
	group, variant := name[:i], name[i+1:]
	ns, err := strconv.ParseFloat(fields[2], 64)
	if err != nil {
		return result{}, false
	}
	r := result{group: group, variant: variant, nsPerOp: ns, rates: map[string]float64{}}
	for i := 4; i+1 < len(fields); i += 2 {
		if v, err := strconv.ParseFloat(fields[i], 64); err == nil && strings.HasSuffix(fields[i+1], "/s") {
			r.rates[fields[i+1]] = v
		}
	}
	return r, true
}

func report(in io.Reader, out io.Writer) error {
	groups := map[string]map[string]result{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if r, ok := parse(sc.Text()); ok {
			if groups[r.group] == nil {
				groups[r.group] = map[string]result{}
			}
			groups[r.group][r.variant] = r
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	printed := 0
	for _, g := range names {
		base, ok := groups[g]["baseline"]
		if !ok || base.nsPerOp == 0 {
			continue
		}
		variants := make([]string, 0, len(groups[g]))
		for v := range groups[g] {
			if v != "baseline" {
				variants = append(variants, v)
			}
		}
		sort.Strings(variants)
		for _, v := range variants {
			r := groups[g][v]
			fmt.Fprintf(out, "%-40s %-20s %12.0f ns/op  vs baseline %12.0f ns/op  ratio %.3f\n", g, v, r.nsPerOp, base.nsPerOp, r.nsPerOp/base.nsPerOp)
			units := make([]string, 0, len(r.rates))
			for u := range r.rates {
				units = append(units, u)
			}
			sort.Strings(units)
			for _, u := range units {
				if b := base.rates[u]; b > 0 {
					fmt.Fprintf(out, "%-40s %-20s %12.0f %-8s vs baseline %12.0f %-8s ratio %.3f\n", g, v, r.rates[u], u, b, u, r.rates[u]/b)
				}
			}
			printed++
		}
	}
	if printed == 0 {
		return fmt.Errorf("no benchmark with a baseline in the input")
	}
	return nil
}
