package manifests

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/proto/registry"
)

// The module list and proto/registry are the two sources of truth; these tests fail when a bounded
// context is added to one but not the other, or forgotten in a production binary or in deploy/.

func TestEveryEdgeBackendIsAModule(t *testing.T) {
	var names []string
	for _, m := range allinone.Modules {
		names = append(names, m.Name)
	}
	for _, b := range edge.Modules() {
		if !slices.Contains(names, b) {
			t.Errorf("the edge forwards to %q, which is not in allinone.Modules", b)
		}
	}
}

// TestEveryModuleHasItsProtosInTheRegistry ties the two lists a context is added to: the module
// list (what runs) and proto/registry (what the edge, the event catalog and the generators read).
func TestEveryModuleHasItsProtosInTheRegistry(t *testing.T) {
	var names []string
	for _, m := range allinone.Modules {
		names = append(names, m.Name)
		if !slices.Contains(registry.Names(), m.Name) {
			t.Errorf("module %s has no entry in proto/registry's Contexts", m.Name)
		}
	}
	for _, c := range registry.Names() {
		if !slices.Contains(names, c) {
			t.Errorf("proto/registry lists the context %q, which is not in allinone.Modules", c)
		}
	}
}

func TestEveryModuleHasAProductionBinary(t *testing.T) {
	for _, m := range allinone.Modules {
		main := filepath.Join(repoRoot(t), "services", m.Name, "cmd", m.Name, "main.go")
		src, err := os.ReadFile(main)
		if err != nil {
			t.Errorf("module %s: %v", m.Name, err)
			continue
		}
		if !bytes.Contains(src, []byte("svcmain.Main(server.Module)")) {
			t.Errorf("%s does not run svcmain.Main(server.Module)", main)
		}
	}
}

func TestKubernetesManifestsDeployEveryModule(t *testing.T) {
	docs := k8sDocs(t)
	gatewayEnv := envOf(t, docs, "Deployment", "berth-gateway")
	for _, m := range allinone.Modules {
		_, port, _ := net.SplitHostPort(m.DefaultAddr)
		env := envOf(t, docs, "Deployment", "berth-"+m.Name)
		if got := env["BERTH_GRPC_ADDR"]; got != "0.0.0.0:"+port {
			t.Errorf("berth-%s: BERTH_GRPC_ADDR = %q, want 0.0.0.0:%s", m.Name, got, port)
		}
		if env["BERTH_OPS_ADDR"] == "" {
			t.Errorf("berth-%s sets no BERTH_OPS_ADDR for its probes", m.Name)
		}
		svc := find(t, docs, "Service", "berth-"+m.Name)
		if spec, _ := svc["spec"].(map[string]any); spec["clusterIP"] != "None" {
			t.Errorf("Service berth-%s is not headless: clients could not balance over its replicas", m.Name)
		}
		if slices.Contains(edge.Modules(), m.Name) && gatewayEnv[m.AddrVar()] == "" {
			t.Errorf("the gateway Deployment does not set %s", m.AddrVar())
		}
	}
}

func TestComposeRunsEveryModuleOnItsOwnDatabase(t *testing.T) {
	compose := composeServices(t)
	initSQL, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "postgres-init.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range allinone.Modules {
		svc, ok := compose[m.Name]
		if !ok {
			t.Errorf("docker-compose.yml has no service %q", m.Name)
			continue
		}
		if !strings.Contains(svc.Environment["BERTH_DATABASE_URL"], "/berth_"+m.Name) {
			t.Errorf("compose service %s: BERTH_DATABASE_URL %q is not berth_%s", m.Name, svc.Environment["BERTH_DATABASE_URL"], m.Name)
		}
		if !bytes.Contains(initSQL, []byte("CREATE DATABASE berth_"+m.Name+";")) {
			t.Errorf("deploy/postgres-init.sql does not create berth_%s", m.Name)
		}
		if slices.Contains(edge.Modules(), m.Name) && compose["gateway"].Environment[m.AddrVar()] == "" {
			t.Errorf("the compose gateway does not set %s", m.AddrVar())
		}
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func k8sDocs(t *testing.T) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "deploy", "k8s", "berth.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var docs []map[string]any
	dec := yaml.NewDecoder(f)
	for {
		var d map[string]any
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			return docs
		} else if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
}

func find(t *testing.T, docs []map[string]any, kind, name string) map[string]any {
	t.Helper()
	for _, d := range docs {
		if meta, _ := d["metadata"].(map[string]any); d["kind"] == kind && meta["name"] == name {
			return d
		}
	}
	t.Fatalf("deploy/k8s has no %s %s", kind, name)
	return nil
}

// envOf returns the first container's environment of a Deployment (values only; secret
// references count as set).
func envOf(t *testing.T, docs []map[string]any, kind, name string) map[string]string {
	t.Helper()
	d := find(t, docs, kind, name)
	spec := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	container := spec["containers"].([]any)[0].(map[string]any)
	env := map[string]string{}
	for _, e := range container["env"].([]any) {
		kv := e.(map[string]any)
		v, _ := kv["value"].(string)
		if v == "" && kv["valueFrom"] != nil {
			v = "(secret)"
		}
		env[kv["name"].(string)] = v
	}
	return env
}

// composeServices is docker-compose.yml's services with their environments (anchors merged).
func composeServices(t *testing.T) map[string]struct {
	Environment map[string]string `yaml:"environment"`
} {
	t.Helper()
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatal(err)
	}
	return compose.Services
}
