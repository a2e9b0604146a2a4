package target

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/seed"
)

// TestTheServicesAreTheAllInOnesModulesWithTheirDefaultAddresses keeps berthctl's copy of the
// modules' names and addresses (it does not link the services) equal to the modules'.
func TestTheServicesAreTheAllInOnesModulesWithTheirDefaultAddresses(t *testing.T) {
	if len(Services) != len(allinone.Modules) {
		t.Fatalf("%d services, %d modules", len(Services), len(allinone.Modules))
	}
	for i, m := range allinone.Modules {
		if Services[i].Name != m.Name || Services[i].DefaultAddr != m.DefaultAddr {
			t.Errorf("service %d is %s at %s, the module %s at %s", i, Services[i].Name, Services[i].DefaultAddr, m.Name, m.DefaultAddr)
		}
	}
}

func TestEachValueComesFromTheFirstSourceThatHasIt(t *testing.T) {
	root := t.TempDir()
	demoDir := filepath.Join(root, seed.DefaultDir)
	if _, err := seed.WriteFile(demoDir, seed.File{AdminToken: "from-file",
		GRPC: map[string]string{"identity": "127.0.0.1:7001", "tenant": "127.0.0.1:7002"}}); err != nil {
		t.Fatal(err)
	}
	demoPath := filepath.Join(demoDir, seed.FileName)
	nested := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(nested, 0o700); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	for _, c := range []struct {
		name  string
		env   map[string]string
		flags map[string]string
		dir   string
		// want are identity's and tenant's address and source, and the token and its source.
		identity, identityFrom, tenant, tenantFrom, token, tokenFrom string
	}{
		{name: "the demo file in an ancestor", dir: nested,
			identity: "127.0.0.1:7001", identityFrom: demoPath, tenant: "127.0.0.1:7002", tenantFrom: demoPath, token: "from-file", tokenFrom: demoPath},
		{name: "the environment over the file", dir: nested,
			env:      map[string]string{"BERTH_IDENTITY_GRPC_ADDR": "10.0.0.1:1", "BERTH_ADMIN_TOKEN": "from-env"},
			identity: "10.0.0.1:1", identityFrom: "BERTH_IDENTITY_GRPC_ADDR", tenant: "127.0.0.1:7002", tenantFrom: demoPath, token: "from-env", tokenFrom: "BERTH_ADMIN_TOKEN"},
		{name: "a flag over the environment", dir: nested,
			env:      map[string]string{"BERTH_IDENTITY_GRPC_ADDR": "10.0.0.1:1"},
			flags:    map[string]string{"identity": "10.0.0.2:2"},
			identity: "10.0.0.2:2", identityFrom: "flag -identity", tenant: "127.0.0.1:7002", tenantFrom: demoPath, token: "from-file", tokenFrom: demoPath},
		{name: "BERTH_DEMO_DIR from anywhere", dir: elsewhere, env: map[string]string{"BERTH_DEMO_DIR": demoDir},
			identity: "127.0.0.1:7001", identityFrom: demoPath, tenant: "127.0.0.1:7002", tenantFrom: demoPath, token: "from-file", tokenFrom: demoPath},
		{name: "no file: the defaults", dir: elsewhere, env: map[string]string{"BERTH_ADMIN_TOKEN": "t"},
			identity: "127.0.0.1:9101", identityFrom: "default", tenant: "127.0.0.1:9102", tenantFrom: "default", token: "t", tokenFrom: "BERTH_ADMIN_TOKEN"},
	} {
		got, err := Resolve(func(name string) string { return c.env[name] }, c.flags, c.dir)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Addrs["identity"] != c.identity || got.AddrFrom["identity"] != c.identityFrom || got.Addrs["tenant"] != c.tenant ||
			got.AddrFrom["tenant"] != c.tenantFrom || got.Token != c.token || got.TokenFrom != c.tokenFrom {
			t.Errorf("%s: identity %s (%s), tenant %s (%s), token %s (%s)", c.name, got.Addrs["identity"], got.AddrFrom["identity"],
				got.Addrs["tenant"], got.AddrFrom["tenant"], got.Token, got.TokenFrom)
		}
	}
}

func TestResolveRefusesWhatItCannotUse(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no token anywhere", nil, ErrNoToken.Error()},
		{"a bad address", map[string]string{"BERTH_ADMIN_TOKEN": "t", "BERTH_BILLING_GRPC_ADDR": "billing"}, `BERTH_BILLING_GRPC_ADDR="billing": must be host:port`},
		{"a demo folder without the file", map[string]string{"BERTH_DEMO_DIR": t.TempDir()}, "BERTH_DEMO_DIR="},
		{"a partial TLS set", map[string]string{"BERTH_ADMIN_TOKEN": "t", "BERTH_GRPC_TLS_CERT": "/x.pem"}, "BERTH_GRPC_TLS"},
	} {
		_, err := Resolve(func(name string) string { return c.env[name] }, nil, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if c.name == "no token anywhere" && !errors.Is(err, ErrNoToken) {
			t.Errorf("no token: %v is not ErrNoToken", err)
		}
	}
	// The admin token never appears in a refusal.
	if _, err := Resolve(func(name string) string {
		return map[string]string{"BERTH_ADMIN_TOKEN": "s3cret", "BERTH_TENANT_GRPC_ADDR": "x"}[name]
	}, nil, t.TempDir()); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("refusal %v", err)
	}
}
