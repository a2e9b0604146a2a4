package architecture

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wholeSystemModule is the folder of the module whose job is to test everything together: it may
// require any sibling for its tests alone.
const wholeSystemModule = "tests"

// TestNoModuleRequiresASiblingOnlyForItsTests: a module's go.mod may require another module of the
// workspace only when the module's own code (not its tests) imports it, directly or through other
// packages. A requirement for tests alone still puts the sibling in the module's graph: tidying,
// building and releasing the module then depends on a module its programs never link, and the
// test reaches into another module's packages instead of its public surface. Tests that need a
// sibling at run time start it as a process (pkg/testkit/sandboxproc for the provider sandboxes,
// pkg/testkit/procs for the gateway in analytics' benchmark)
// or live in the tests module.
//
// The modules come from go.work and their requirements from their go.mod files; what each
// module's packages reach comes from one `go list -test` over the workspace, which lists every
// package with its transitive imports (Deps) for the current platform, test variants (ForTest,
// the generated .test mains) apart from the module's own packages.
func TestNoModuleRequiresASiblingOnlyForItsTests(t *testing.T) {
	root := repoRoot(t)
	mods := workspaceModules(t, root)
	if len(mods) < 10 {
		t.Fatalf("go.work lists %d modules: the test is not looking at the workspace", len(mods))
	}
	var patterns []string
	for _, m := range mods {
		patterns = append(patterns, "./"+m.dir+"/...")
	}
	pkgs := listPackages(t, root, patterns)
	var checked []module
	for _, m := range mods {
		if m.dir != wholeSystemModule {
			checked = append(checked, m)
		}
	}
	found := testOnlyRequirements(checked, mods, pkgs)
	t.Logf("checked the sibling requirements of %d modules over %d packages", len(checked), len(pkgs))
	for _, r := range found {
		if r.testsUse {
			t.Errorf("%s/go.mod requires %s, which only its tests import: drive the sibling over its public "+
				"surface (a process, HTTP, gRPC) or move the test to the %s module", r.module, r.sibling, wholeSystemModule)
		} else {
			t.Errorf("%s/go.mod requires %s, which nothing in it imports: run make tidy", r.module, r.sibling)
		}
	}
}

// TestTestOnlyRequirementsAreRecognised shows the rule above on a made-up workspace: a requirement
// reached only by a test variant, an external test package or a test main is caught, one reached
// by a module's own package (through another sibling too) is not, and one nothing reaches is
// caught as unused.
func TestTestOnlyRequirementsAreRecognised(t *testing.T) {
	mod := func(dir string, requires ...string) module {
		var paths []string
		for _, r := range requires {
			paths = append(paths, repo+r)
		}
		return module{dir: dir, path: repo + dir, requires: paths}
	}
	pkg := func(importPath, forTest string, deps ...string) listedPackage {
		p := listedPackage{ImportPath: repo + importPath, Deps: deps}
		if forTest != "" {
			p.ForTest = repo + forTest
		}
		return p
	}
	mods := []module{
		mod("app", "lib", "deep", "fake", "helper", "stale"),
		mod("lib", "deep"),
		mod("deep"), mod("fake"), mod("helper"), mod("stale"),
	}
	pkgs := []listedPackage{
		pkg("app/cmd", "", repo+"app/core", repo+"lib/x", repo+"deep/y", "fmt"), // deep only through lib
		pkg("app/core", ""),
		pkg("app/core [app/core.test]", "app/core", repo+"fake/z"),
		pkg("app/core_test [app/core.test]", "app/core", repo+"helper/h"),
		pkg("app/core.test", "", repo+"app/core [app/core.test]", repo+"fake/z", repo+"helper/h"),
		pkg("lib/x", "", repo+"deep/y"),
	}
	got := testOnlyRequirements(mods, mods, pkgs)
	want := []requirement{{"app", "fake", true}, {"app", "helper", true}, {"app", "stale", false}}
	if !slices.Equal(got, want) {
		t.Fatalf("found %+v, want %+v", got, want)
	}
}

// module is one module of the workspace.
type module struct {
	dir      string   // as go.work names it, without the leading ./
	path     string   // the module path
	requires []string // the module paths its go.mod requires, direct and indirect
}

// listedPackage is what `go list -test -json` says of one package.
type listedPackage struct {
	ImportPath string
	ForTest    string // set on the variants of a package compiled for its tests
	Deps       []string
}

// requirement is a sibling (by folder) that a module (by folder) requires but none of its
// non-test packages reaches; testsUse says whether its tests do.
type requirement struct {
	module, sibling string
	testsUse        bool
}

// testOnlyRequirements checks the requirements of mods against what the packages reach; all is
// every module of the workspace (to tell which one a package belongs to). The answer is sorted by
// module, then sibling.
func testOnlyRequirements(mods, all []module, pkgs []listedPackage) []requirement {
	owner := func(importPath string) *module {
		importPath, _, _ = strings.Cut(importPath, " ") // "p [q.test]" is p compiled for q's tests
		var best *module
		for i, m := range all {
			if (importPath == m.path || strings.HasPrefix(importPath, m.path+"/")) && (best == nil || len(m.path) > len(best.path)) {
				best = &all[i]
			}
		}
		return best
	}
	type use struct{ code, tests bool }
	uses := map[[2]string]*use{} // module dir, sibling path
	for _, p := range pkgs {
		m := owner(p.ImportPath)
		if m == nil {
			continue
		}
		test := p.ForTest != "" || strings.HasSuffix(p.ImportPath, ".test")
		for _, dep := range p.Deps {
			sib := owner(dep)
			if sib == nil || sib == m {
				continue
			}
			u := uses[[2]string{m.dir, sib.path}]
			if u == nil {
				u = &use{}
				uses[[2]string{m.dir, sib.path}] = u
			}
			u.code = u.code || !test
			u.tests = u.tests || test
		}
	}
	var out []requirement
	for _, m := range mods {
		for _, r := range m.requires {
			sib := owner(r)
			if sib == nil || sib.path != r {
				continue // not a module of the workspace
			}
			u := uses[[2]string{m.dir, r}]
			if u == nil || !u.code {
				out = append(out, requirement{m.dir, sib.dir, u != nil && u.tests})
			}
		}
	}
	slices.SortFunc(out, func(a, b requirement) int {
		return strings.Compare(a.module+"\x00"+a.sibling, b.module+"\x00"+b.sibling)
	})
	return out
}

// workspaceModules reads go.work's modules and each one's go.mod (go work edit / go mod edit
// -json, which read the files without resolving anything).
func workspaceModules(t *testing.T, root string) []module {
	t.Helper()
	var work struct{ Use []struct{ DiskPath string } }
	goJSON(t, root, &work, "work", "edit", "-json")
	var mods []module
	for _, u := range work.Use {
		dir := strings.TrimPrefix(filepath.ToSlash(filepath.Clean(u.DiskPath)), "./")
		var gomod struct {
			Module  struct{ Path string }
			Require []struct{ Path string }
		}
		goJSON(t, root, &gomod, "mod", "edit", "-json", filepath.Join(dir, "go.mod"))
		m := module{dir: dir, path: gomod.Module.Path}
		for _, r := range gomod.Require {
			m.requires = append(m.requires, r.Path)
		}
		mods = append(mods, m)
	}
	return mods
}

// listPackages is `go list -test -json` over the patterns, run in the workspace at root.
func listPackages(t *testing.T, root string, patterns []string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-test", "-json=ImportPath,ForTest,Deps"}, patterns...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr(err))
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var pkgs []listedPackage
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// goJSON runs a go command that prints one JSON value and decodes it into v.
func goJSON(t *testing.T, dir string, v any, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr(err))
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
}

// stderr is what a failed command printed on its standard error.
func stderr(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}
