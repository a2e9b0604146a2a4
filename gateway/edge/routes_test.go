package edge

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/berthhq/berth/pkg/route"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"

	// The generated packages register their files in protoregistry.GlobalFiles.
	_ "github.com/berthhq/berth/proto/analytics/v1"
	_ "github.com/berthhq/berth/proto/billing/v1"
	_ "github.com/berthhq/berth/proto/identity/v1"
	_ "github.com/berthhq/berth/proto/tenant/v1"
	_ "github.com/berthhq/berth/proto/webhook/v1"
)

// implementedRoutes are the route numbers of the published interface (all of them); extraRoutes
// are the (method, path) pairs its decisions add beyond its table (docs/api.md lists them all).
var (
	implementedRoutes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}
	extraRoutes       = []string{
		"POST /v1/users/:userId",                            // route 18's POST alias (the interface's decisions)
		"GET /v1/analytics/sign-ins",                        // route 8 where the published client calls it
		"GET /v1/users/me",                                  // documented extra routes (the interface's decisions)
		"GET /v1/tenants/me",                                //
		"DELETE /v1/users/:userId",                          //
		"GET /apps/:appId/.well-known/openid-configuration", // OpenID discovery per app (issue: tokens)
		"GET /apps/:appId/.well-known/jwks.json",            // the app's signing key as a JWKS
	}
)

// TestRouteTableMatchesSpec checks that every HTTP-bound RPC declares its envelope family and that
// the set of HTTP routes equals the spec's table for the implemented routes.
func TestRouteTableMatchesSpec(t *testing.T) {
	specRoutes := readSpecRoutes(t)

	want := slices.Clone(extraRoutes)
	for _, n := range implementedRoutes {
		r, ok := specRoutes[n]
		if !ok {
			t.Fatalf("route %d is not in the spec's route table", n)
		}
		want = append(want, r)
	}

	got := httpRoutes(t)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("HTTP routes in the proto registry differ from the spec\n got: %q\nwant: %q", got, want)
	}
}

// httpRoutes walks the registry for methods with a google.api.http rule (additional bindings
// included) and returns them as "METHOD /path/:param". A method without a family, or one whose
// access policy is service-only or admin, fails the test.
func httpRoutes(t *testing.T) []string {
	t.Helper()
	var routes []string
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
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

var (
	// **1. POST `{base_url}/api/v1/tokens`**
	specHeading = regexp.MustCompile("^\\*\\*(\\d+)\\. ([A-Z]+) `(?:\\{base_url\\})?(/[^`]*)`\\*\\*")
	// | 14 | GET `/v1/users/:userId` | ...
	specRow = regexp.MustCompile("^\\|\\s*(\\d+)\\s*\\|\\s*([A-Z]+) `(/[^`]*)`")
)

// readSpecRoutes parses interface.md's numbered routes into "METHOD /path" by route number.
func readSpecRoutes(t *testing.T) map[int]string {
	t.Helper()
	path := specFile(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open spec: %v", err)
	}
	defer func() { _ = f.Close() }()
	routes := map[int]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		m := specHeading.FindStringSubmatch(line)
		if m == nil {
			m = specRow.FindStringSubmatch(line)
		}
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if prev, dup := routes[n]; dup {
			t.Fatalf("spec lists route %d twice: %q and %q", n, prev, m[2]+" "+m[3])
		}
		routes[n] = m[2] + " " + m[3]
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read spec: %v", err)
	}
	// The spec numbers its routes 1..N; a gap means a line the patterns no longer recognise.
	for n := 1; n <= len(routes); n++ {
		if _, ok := routes[n]; !ok {
			t.Fatalf("parsed %d routes from %s but not route %d: has its format changed?", len(routes), path, n)
		}
	}
	if len(routes) == 0 {
		t.Fatalf("no routes found in %s: has its format changed?", path)
	}
	return routes
}

// specFile finds interface.md: $BERTH_SPEC_DIR, else shared/spec/interface.md beside an ancestor of
// the working directory (the repo's checkout sits next to shared/). Without it the test skips,
// except in CI, where the spec must be present.
func specFile(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("BERTH_SPEC_DIR"); dir != "" {
		return filepath.Join(dir, "interface.md")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		candidate := filepath.Join(dir, "shared", "spec", "interface.md")
		if _, err := os.Stat(candidate); err == nil {
			return candidate
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	msg := fmt.Sprintf("spec not found: set BERTH_SPEC_DIR or place shared/spec/interface.md beside an ancestor of %s", wd)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
