package cluster

import (
	"slices"
	"testing"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/pkg/module"
)

func TestStartOrderStartsTheCalledModulesFirst(t *testing.T) {
	for _, tc := range []struct {
		name    string
		modules []module.Module
		want    []string
	}{
		{"no peers keep the list's order",
			[]module.Module{{Name: "a"}, {Name: "b"}}, []string{"a", "b"}},
		{"a called module starts before its caller",
			[]module.Module{{Name: "a", Peers: []string{"b"}}, {Name: "b"}}, []string{"b", "a"}},
		{"modules calling one another start in the list's order",
			[]module.Module{{Name: "a", Peers: []string{"b"}}, {Name: "b", Peers: []string{"a"}}, {Name: "c", Peers: []string{"a", "b"}}},
			[]string{"a", "b", "c"}},
		{"a chain starts from its end",
			[]module.Module{{Name: "a", Peers: []string{"b"}}, {Name: "b", Peers: []string{"c"}}, {Name: "c"}}, []string{"c", "b", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := startOrder(tc.modules); !slices.Equal(got, tc.want) {
				t.Errorf("startOrder = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTheClusterRunsEveryModuleAndTheEdge(t *testing.T) {
	for _, m := range allinone.Modules {
		if !slices.Contains(order, m.Name) {
			t.Errorf("order = %v lacks the module %s", order, m.Name)
		}
	}
	if order[len(order)-1] != gateway {
		t.Errorf("order = %v: the edges start last, after the modules they forward to", order)
	}
	for _, name := range order {
		want := 2
		if slices.Contains(singleReplica, name) {
			want = 1
		}
		if replicaCounts[name] != want {
			t.Errorf("%s runs %d replicas, want %d", name, replicaCounts[name], want)
		}
	}
}
