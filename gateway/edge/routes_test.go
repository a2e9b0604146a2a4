package edge

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/berthhq/berth/pkg/route"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	"github.com/berthhq/berth/proto/registry"
)

// implementedRoutes are the route numbers of the published interface the edge serves (all of
// them). The routes beyond its table are documented in docs/api.md, which is the list
// TestTheAPIPageListsEveryRoute holds the protos to.
var implementedRoutes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}

// TestTheAPIPageListsEveryRoute checks that the routes the protos bind are the routes
// docs/api.md's route table documents: a route added to a proto (a new context's too) is
// documented there, and the page names no route that is not served.
func TestTheAPIPageListsEveryRoute(t *testing.T) {
	var documented []string
	for _, row := range readAPIPageRoutes(t) {
		documented = append(documented, row.routes...)
	}
	got := httpRoutes(t)
	for _, r := range got {
		if !slices.Contains(documented, r) {
			t.Errorf("%s is bound by a proto but not in %s's route table", r, apiPage)
		}
	}
	for _, r := range documented {
		if !slices.Contains(got, r) {
			t.Errorf("%s lists %s, which no proto binds", apiPage, r)
		}
	}
}

// TestTheAPIPageNumbersEveryPublishedRouteOnce checks docs/api.md's numbered rows, the
// repository's record of the published interface's route numbers (verified against the published
// document when each was added): every number the edge implements is there once, and the route it
// names first is bound by a proto, so a renumbered, lost or unbound published route fails here.
func TestTheAPIPageNumbersEveryPublishedRouteOnce(t *testing.T) {
	got := httpRoutes(t)
	numbered := map[int]apiPageRow{}
	for _, row := range readAPIPageRoutes(t) {
		if row.number == 0 {
			continue
		}
		if prev, dup := numbered[row.number]; dup {
			t.Errorf("%s numbers both %q and %q as route %d", apiPage, prev.routes, row.routes, row.number)
		}
		numbered[row.number] = row
	}
	for _, n := range implementedRoutes {
		row, ok := numbered[n]
		if !ok {
			t.Errorf("%s has no row for route %d", apiPage, n)
			continue
		}
		if !slices.Contains(got, row.routes[0]) {
			t.Errorf("route %d, %s, is bound by no proto", n, row.routes[0])
		}
		delete(numbered, n)
	}
	for n, row := range numbered {
		t.Errorf("%s numbers %q as route %d, which is not an implemented route of the published interface", apiPage, row.routes, n)
	}
}

// httpRoutes walks every context's files (proto/registry) for methods with a google.api.http rule (additional bindings
// included) and returns them as "METHOD /path/:param". A method without a family, or one whose
// access policy is service-only or admin, fails the test.
func httpRoutes(t *testing.T) []string {
	t.Helper()
	var routes []string
	registry.Files().RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				bindings := edgev1.HTTPBindings(md)
				if len(bindings) == 0 {
					continue
				}
				r := route.Of(md)
				if r.GetFamily() == edgev1.Family_FAMILY_UNSPECIFIED {
					t.Errorf("%s is HTTP-bound but declares no berth.edge.v1.route family", md.FullName())
				}
				// The edge forwards callers' credentials only; a service-only or admin method behind
				// a REST route would be reachable by nobody, or, were the edge ever to send an
				// internal token, by everybody.
				if r.GetServiceOnly() || r.GetAdmin() {
					t.Errorf("%s is HTTP-bound but restricted to Berth services or operators' admin token", md.FullName())
				}
				for _, b := range bindings {
					if b.Method == "" {
						t.Errorf("%s has an HTTP binding without a method", md.FullName())
						continue
					}
					routes = append(routes, b.Method+" "+normalisePath(b.Path))
				}
			}
		}
		return true
	})
	return routes
}

var pathParam = regexp.MustCompile(`\{([A-Za-z0-9_]+)(=[^}]*)?\}`)

// normalisePath writes grpc-gateway path templates the spec's way: {userId} -> :userId.
func normalisePath(p string) string {
	return pathParam.ReplaceAllString(p, ":$1")
}

// apiPage is the documentation page whose "## Routes" table lists every route the edge serves.
const apiPage = "../../docs/api.md"

// apiPageRow is one row of the page's route table: its number in the spec (0 for "–", a route
// beyond the spec's table) and its routes as "METHOD /path/:param", the main one first.
type apiPageRow struct {
	number int
	routes []string
}

// apiRouteCell matches the backquoted parts of a route cell: "`GET /v1/users/:userId`", an
// alias path "`/v1/analytics/sign-ins`" under the method before it, or an alias method
// "`POST`" on the path before it.
var apiRouteCell = regexp.MustCompile("`([A-Z]+)? ?(/[^`?]*)?[^`]*`")

// readAPIPageRoutes parses the route table of docs/api.md's "## Routes" section.
func readAPIPageRoutes(t *testing.T) []apiPageRow {
	t.Helper()
	page, err := os.ReadFile(apiPage)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(page), "\n## Routes\n")
	if !ok {
		t.Fatalf(`%s has no "## Routes" section`, apiPage)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []apiPageRow
	for line := range strings.Lines(section) {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if !strings.HasPrefix(strings.TrimSpace(line), "|") || len(cells) < 2 {
			continue
		}
		num := strings.TrimSpace(cells[0])
		if num == "#" || strings.Trim(num, "-") == "" {
			continue // the header and its underline
		}
		row := apiPageRow{}
		if num != "–" {
			if row.number, err = strconv.Atoi(num); err != nil {
				t.Fatalf("%s: route row %q is numbered neither by a number nor by –", apiPage, line)
			}
		}
		var method, path string
		for _, m := range apiRouteCell.FindAllStringSubmatch(cells[1], -1) {
			switch {
			case m[1] != "" && m[2] != "": // a route
				method, path = m[1], m[2]
			case m[1] != "" && path != "": // an alias method on the same path
				method = m[1]
			case m[2] != "" && method != "": // an alias path under the same method
				path = m[2]
			default:
				t.Fatalf("%s: cannot read %q in route row %q", apiPage, m[0], line)
			}
			row.routes = append(row.routes, method+" "+path)
		}
		if len(row.routes) == 0 {
			t.Fatalf("%s: route row %q names no route", apiPage, line)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		t.Fatalf("the Routes section of %s has no table rows", apiPage)
	}
	return rows
}
