package manifests

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berthctl/target"
	"github.com/berthhq/berth/gateway/edge"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/svcmain"
	"github.com/berthhq/berth/services/sandbox/mount"
)

// The configuration reference's tables sit between these two lines of docs/configuration.md; the
// rest of the page is written by hand.
const (
	generatedBegin = "<!-- BEGIN generated from the settings declarations: `make docs` rewrites this part -->\n"
	generatedEnd   = "<!-- END generated -->\n"
)

// referenceSections are every process kind's settings, in the reference's order.
func referenceSections() []config.Section {
	sections := []config.Section{{
		Title:    "Every service process",
		Intro:    "Read by each context's production binary (`services/<name>/cmd/<name>`, through `pkg/svcmain`), besides the settings of its module below.",
		Settings: svcmain.Settings,
	}}
	for _, m := range allinone.Modules {
		sections = append(sections, config.Section{
			Title:    "The " + m.Name + " service",
			Intro:    "Its addresses, the addresses of the services it calls, and its own settings. The all-in-one process reads the module's own settings too.",
			Settings: append(svcmain.ModuleSettings(m), m.Settings...),
		})
	}
	return append(sections,
		config.Section{Title: "The gateway", Intro: "The REST edge's production binary, `gateway/cmd/gateway`.", Settings: edge.Settings()},
		config.Section{Title: "The all-in-one process", Intro: "`cmd/berth`, what `make run` starts. Every module's own settings (above) apply too, the edge's `BERTH_TRUSTED_PROXIES` among them, with these defaults: " +
			"`BERTH_ISSUER` the published browser SDK's issuer id, `BERTH_PUBLIC_URL` the edge's address, `BERTH_PSPX_URL` and `BERTH_PSPY_URL` the sandboxes on it, `BERTH_CONSOLE_KEY` random per run, " +
			"and, on memory stores only, `BERTH_API_KEY_PEPPER` and `BERTH_SECRET_KEY` random per run.", Settings: allinone.Settings()},
		config.Section{Title: "The sandbox process", Intro: "`services/sandbox/cmd/sandbox`, the provider sandboxes on their own (compose).", Settings: mount.Settings},
		config.Section{Title: "berthctl", Intro: "`cmd/berthctl`, the operators' CLI. Each service's address comes from its flag (`-identity`, `-tenant`, " +
			"`-analytics`, `-billing`, `-webhook`), else its variable below, else the `.berth/demo.json` of a running all-in-one, else the default; " +
			"the admin token from `BERTH_ADMIN_TOKEN`, else that demo.json. The CA alone of the TLS trio suffices for a client.", Settings: target.Settings()},
	)
}

// TestTheConfigurationReferenceIsGeneratedFromTheDeclarations fails when docs/configuration.md's
// tables differ from what the processes declare; BERTH_WRITE_DOCS=1 (make docs) rewrites them.
func TestTheConfigurationReferenceIsGeneratedFromTheDeclarations(t *testing.T) {
	path := filepath.Join(repoRoot(t), "docs", "configuration.md")
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := bytes.Cut(page, []byte(generatedBegin))
	_, after, ok2 := bytes.Cut(rest, []byte(generatedEnd))
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the lines that enclose its generated part:\n%s%s", path, generatedBegin, generatedEnd)
	}
	var tables bytes.Buffer
	if err := config.WriteReference(&tables, referenceSections()); err != nil {
		t.Fatal(err)
	}
	want := bytes.Join([][]byte{before, []byte(generatedBegin), tables.Bytes(), []byte(generatedEnd), after}, nil)
	if bytes.Equal(page, want) {
		return
	}
	if os.Getenv("BERTH_WRITE_DOCS") == "1" {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/configuration.md is out of date with the settings declarations: run make docs")
}

// TestEveryDeclaredSettingHasItsPurposeWritten keeps the reference readable: a setting without
// words would be a bare row.
func TestEveryDeclaredSettingHasItsPurposeWritten(t *testing.T) {
	for _, s := range referenceSections() {
		for _, st := range s.Settings {
			if len(strings.TrimSpace(st.Doc)) < 10 || !strings.HasPrefix(st.Name, "BERTH_") {
				t.Errorf("%s (%s): a setting needs a BERTH_ name and a sentence on what it is for", st.Name, s.Title)
			}
		}
	}
}

// declaredFor are the settings a deployed process reads, by its name in deploy/ ("identity",
// "gateway", "sandbox", ...).
func declaredFor(t *testing.T, process string) []config.Setting {
	t.Helper()
	switch process {
	case "gateway":
		return edge.Settings()
	case "sandbox":
		return mount.Settings
	}
	for _, m := range allinone.Modules {
		if m.Name == process {
			return append(append(append([]config.Setting{}, svcmain.Settings...), svcmain.ModuleSettings(m)...), m.Settings...)
		}
	}
	t.Fatalf("deploy/ runs %q, which is no Berth process", process)
	return nil
}

// checkEnvironment holds a deployed process's environment to its declarations: every variable set
// is one the process reads, every required one is set, and every value given in the file passes
// the setting's rule (values from a secret store count as set and are not seen).
func checkEnvironment(t *testing.T, where, process string, env map[string]string, fromSecrets map[string]bool) {
	t.Helper()
	decls := declaredFor(t, process)
	declared := map[string]bool{}
	for i, d := range decls {
		declared[d.Name] = true
		if fromSecrets[d.Name] {
			decls[i].Required = false // set, from a secret the test cannot read
		}
	}
	for name := range env {
		if strings.HasPrefix(name, "BERTH_") && !declared[name] {
			t.Errorf("%s: %s sets %s, which it does not read", where, process, name)
		}
	}
	for name := range fromSecrets {
		if !declared[name] {
			t.Errorf("%s: %s sets %s, which it does not read", where, process, name)
		}
	}
	if _, err := config.Parse(func(name string) string { return env[name] }, decls); err != nil {
		t.Errorf("%s: %s would refuse to start:\n%v", where, process, err)
	}
}

func TestComposeGivesEveryProcessTheSettingsItNeedsAndNoOthers(t *testing.T) {
	compose := composeServices(t)
	checked := 0
	for name, svc := range compose {
		if name == "postgres" || name == "nats" {
			continue
		}
		checkEnvironment(t, "docker-compose.yml", name, svc.Environment, nil)
		checked++
	}
	if checked < len(allinone.Modules)+2 {
		t.Fatalf("checked %d compose services, want every module, the gateway and the sandbox", checked)
	}
}

func TestKubernetesGivesEveryProcessTheSettingsItNeedsAndNoOthers(t *testing.T) {
	docs := k8sDocs(t)
	checked := 0
	for _, d := range docs {
		meta, _ := d["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		if d["kind"] != "Deployment" {
			continue
		}
		process, ok := strings.CutPrefix(name, "berth-")
		if !ok {
			continue
		}
		spec := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		container := spec["containers"].([]any)[0].(map[string]any)
		env, secrets := map[string]string{}, map[string]bool{}
		for _, e := range container["env"].([]any) {
			kv := e.(map[string]any)
			if kv["valueFrom"] != nil {
				secrets[kv["name"].(string)] = true
				continue
			}
			env[kv["name"].(string)], _ = kv["value"].(string)
		}
		checkEnvironment(t, "deploy/k8s/berth.yaml", process, env, secrets)
		checked++
	}
	if checked < len(allinone.Modules)+1 {
		t.Fatalf("checked %d Deployments, want every module and the gateway", checked)
	}
}
