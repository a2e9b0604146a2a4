package edge

import (
	"maps"
	"slices"
	"testing"

	"github.com/berthhq/berth/proto/registry"
)

// TestTheRoutingTableDerivesFromTheRegistry checks backendsOf against proto/registry: one row per
// context with HTTP-bound services, each service under its context, served by hand or through its
// generated handlers but never both, and no exception naming a service the registry does not hold
// (a renamed service would otherwise lose its exception without a word).
func TestTheRoutingTableDerivesFromTheRegistry(t *testing.T) {
	var want []string
	contextOf := map[string]string{}
	for _, c := range registry.Contexts {
		if len(c.HTTP) > 0 {
			want = append(want, c.Name)
		}
		for _, s := range c.HTTP {
			contextOf[s.Name] = c.Name
		}
	}
	if got := Modules(); !slices.Equal(got, want) {
		t.Errorf("Modules() = %v, want the contexts with HTTP-bound services, %v", got, want)
	}
	for _, tc := range []struct {
		exception string
		names     []string
	}{
		{"servedByHand", slices.Collect(maps.Keys(servedByHand))},
		{"ownClients", slices.Collect(maps.Keys(ownClients))},
	} {
		for _, name := range tc.names {
			if contextOf[name] == "" {
				t.Errorf("%s names %s, which is no HTTP-bound service of proto/registry", tc.exception, name)
			}
		}
	}
	served := 0
	for _, be := range backends {
		for _, svc := range be.services {
			served++
			if contextOf[svc.Name] != be.module {
				t.Errorf("%s is in the %s row, its context is %q", svc.Name, be.module, contextOf[svc.Name])
			}
			if _, ok := servedByHand[svc.Name]; ok {
				t.Errorf("%s is served by hand and through its generated handlers", svc.Name)
			}
		}
		served += len(be.raw)
	}
	if served != len(contextOf) {
		t.Errorf("the routing table serves %d services, the registry binds %d", served, len(contextOf))
	}
}
