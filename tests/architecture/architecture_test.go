package architecture

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const repo = "github.com/berthhq/berth/"

// transport are the import paths (and path prefixes) the pure layers must not use directly: gRPC,
// PostgreSQL, NATS and HTTP, and Berth's own packages that wrap them.
var transport = []string{
	"google.golang.org/grpc",
	"github.com/jackc/pgx",
	"github.com/nats-io/",
	"net/http",
	repo + "pkg/grpcx",
	repo + "pkg/pgxx",
	repo + "pkg/natsx",
	repo + "pkg/module",
	repo + "pkg/ops",
	repo + "pkg/svcmain",
}

// sourceFile is one Go file with its imports.
type sourceFile struct {
	path    string // relative to the repository root
	service string // services/<service>/..., "" outside services/
	// composer marks the code whose job is to put the modules together: the all-in-one (cmd/berth),
	// the whole-system suites (tests/) and the benchmark tools (tools/).
	composer bool
	test     bool
	imports  []string
}

func TestDomainAndUseCasesImportNoTransportOrStorage(t *testing.T) {
	checked := 0
	for _, f := range sources(t) {
		if f.service == "" || f.test || !pureLayer(f.path) {
			continue
		}
		checked++
		for _, imp := range f.imports {
			for _, banned := range transport {
				if imp == banned || strings.HasPrefix(imp, banned+"/") || (strings.HasSuffix(banned, "/") && strings.HasPrefix(imp, banned)) {
					t.Errorf("%s imports %s: internal/domain and internal/app must not know transport or storage", f.path, imp)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no domain or app source: the test is not looking at the services")
	}
}

func TestNoServiceImportsAnotherServicesPackages(t *testing.T) {
	for _, f := range sources(t) {
		for _, imp := range f.imports {
			other, ok := strings.CutPrefix(imp, repo+"services/")
			if !ok {
				continue
			}
			other, _, _ = strings.Cut(other, "/")
			switch {
			case f.composer:
				// The all-in-one process, the system tests and the tools compose every module;
				// that is their job.
			case other == "sandbox" && f.test && f.service != "sandbox":
				// The provider fakes are test fixtures, but importing them would make the module
				// require the sandbox module for its tests alone (modules_test.go).
				t.Errorf("%s imports %s: a service's tests drive the provider sandboxes as a process, over HTTP (pkg/testkit/sandboxproc)", f.path, imp)
			case f.service == "":
				t.Errorf("%s imports %s: shared packages and the gateway must not depend on a service", f.path, imp)
			case other != f.service:
				t.Errorf("%s imports %s: services talk over gRPC and events, never through each other's packages", f.path, imp)
			}
		}
	}
}

func TestOnlyTheAllInOneAndTestsLinkTheProviderSandboxes(t *testing.T) {
	for _, f := range sources(t) {
		if f.test || f.composer || f.service == "sandbox" {
			continue
		}
		for _, imp := range f.imports {
			if strings.HasPrefix(imp, repo+"services/sandbox") {
				t.Errorf("%s imports %s: the sandboxes are development and test fakes, never part of a service", f.path, imp)
			}
		}
	}
}

// pureLayer reports whether a file belongs to a service's internal/domain or internal/app tree
// (porttest included: conformance suites run against every adapter, so they speak in ports).
func pureLayer(path string) bool {
	parts := strings.Split(filepath.ToSlash(path), "/")
	return len(parts) > 4 && parts[0] == "services" && parts[2] == "internal" && (parts[3] == "domain" || parts[3] == "app")
}

// sources parses the imports of every Go file of the repository outside proto/ (generated code).
func sources(t *testing.T) []sourceFile {
	t.Helper()
	root := repoRoot(t)
	var files []sourceFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "proto" || strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		parsed, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		f := sourceFile{path: rel, test: strings.HasSuffix(path, "_test.go")}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) > 2 && parts[0] == "services" {
			f.service = parts[1]
		}
		f.composer = parts[0] == "tests" || parts[0] == "tools" || (len(parts) > 2 && parts[0] == "cmd" && parts[1] == "berth")
		for _, imp := range parsed.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			f.imports = append(f.imports, p)
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// repoRoot is the repository's top folder, two above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	return root
}
