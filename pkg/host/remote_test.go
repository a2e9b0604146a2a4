package host_test

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/host"
)

func TestRemotesDialOnlyTheModulesTheProcessCallsOnceEachPerCredential(t *testing.T) {
	settings, err := config.Parse(func(name string) string { return map[string]string{"BERTH_PEER_ADDR": "127.0.0.1:1"}[name] },
		[]config.Setting{{Name: "BERTH_PEER_ADDR", Kind: config.Text}})
	if err != nil {
		t.Fatal(err)
	}
	r := host.NewRemotes("probe", []string{"peer"}, settings, "svc", nil)
	defer r.Close()
	if _, err := r.Dial("stranger", true); err == nil || !strings.Contains(err.Error(), "probe calls the stranger service") {
		t.Fatalf("dialling an undeclared module: %v", err)
	}
	plain, err := r.Dial("peer", false)
	if err != nil {
		t.Fatal(err)
	}
	service, err := r.Dial("peer", true)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := r.Dial("peer", false)
	if plain == service || plain != again {
		t.Fatal("want one connection per module and credential, reused")
	}
}
