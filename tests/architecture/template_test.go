package architecture

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// maxPortMethods bounds the methods a storage port declares of its own. A port stores one
// aggregate: identity, which splits its store that way, has none above 6 (Users, RefreshTokens),
// and a port past this bound is several aggregates behind one name.
const maxPortMethods = 8

// templateDirs are the folders every service has, besides cmd/<name> (see docs/architecture.md,
// "One service template").
var templateDirs = []string{
	"server",
	"internal/domain",
	"internal/app",
	"internal/app/porttest",
	"internal/convert",
	"internal/adapters/grpcapi",
	"internal/adapters/memory",
	"internal/adapters/postgres",
}

// templateRule is one rule of the service template: check looks at the service in dir (the
// folder services/<name>) and reports what it checked and what breaks the rule.
type templateRule struct {
	name  string
	check func(dir, name string) report
}

var templateRules = []templateRule{
	{"layout", checkLayout},
	{"constructor", checkConstructor},
	{"storage ports", checkStoragePorts},
	{"event consumers", checkConsumers},
}

// report is what a rule checked in one service and what it found wrong.
type report struct {
	checked  []string
	problems []string
}

func (r *report) saw(format string, args ...any) {
	r.checked = append(r.checked, fmt.Sprintf(format, args...))
}
func (r *report) problem(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// TestEveryServiceFollowsTheTemplate holds each service of the module list to the template's
// rules and logs, per service and rule, what it checked (go test -v shows it).
func TestEveryServiceFollowsTheTemplate(t *testing.T) {
	root := repoRoot(t)
	names := serviceFolders(t, root)
	if len(names) < 5 {
		t.Fatalf("found the services %v: the test is not looking at services/", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, "services", name)
			for _, rule := range templateRules {
				r := rule.check(dir, name)
				t.Logf("%s, %s: %s", name, rule.name, strings.Join(r.checked, "; "))
				for _, p := range r.problems {
					t.Errorf("%s breaks the template's %s rule: %s", name, rule.name, p)
				}
			}
		})
	}
}

// TestTheModuleListNamesEveryServiceFolder: the template test reads the folders under services/,
// the rest of the system reads allinone.Modules; a context in one and not the other would be
// checked here but never started, or started but never checked.
func TestTheModuleListNamesEveryServiceFolder(t *testing.T) {
	root := repoRoot(t)
	listed := moduleList(t, filepath.Join(root, "cmd", "berth", "allinone", "modules.go"))
	folders := serviceFolders(t, root)
	t.Logf("allinone.Modules: %v; service folders: %v", listed, folders)
	slices.Sort(listed)
	if !slices.Equal(listed, folders) {
		t.Fatalf("allinone.Modules names %v, services/ holds %v (sandbox aside): add the module to the list or the folder to services/", listed, folders)
	}
}

// serviceFolders are the bounded contexts: the folders under services/ except the provider
// sandboxes, sorted.
func serviceFolders(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "services"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "sandbox" && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// moduleList reads the names of the modules in allinone.Modules from its source: each element is
// <alias>.Module of an import of services/<name>/server.
func moduleList(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]string{} // local name -> service
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		rest, ok := strings.CutPrefix(p, repo+"services/")
		if !ok || !strings.HasSuffix(rest, "/server") || imp.Name == nil {
			continue
		}
		servers[imp.Name.Name] = strings.TrimSuffix(rest, "/server")
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || spec.Names[0].Name != "Modules" || len(spec.Values) != 1 {
			return true
		}
		lit, ok := spec.Values[0].(*ast.CompositeLit)
		if !ok {
			t.Fatalf("%s: Modules is not a list literal", path)
		}
		for _, el := range lit.Elts {
			sel, ok := el.(*ast.SelectorExpr)
			x, okX := sel.X.(*ast.Ident)
			if !ok || !okX || sel.Sel.Name != "Module" || servers[x.Name] == "" {
				t.Fatalf("%s: an element of Modules is not <server package>.Module", path)
			}
			names = append(names, servers[x.Name])
		}
		return false
	})
	if len(names) == 0 {
		t.Fatalf("%s: found no Modules list", path)
	}
	return names
}

// checkLayout: the template's folders, cmd/<name>/main.go running svcmain.Main(server.Module),
// server exporting Module, porttest exporting Run, and a doc.go with the package comment in every
// package of the service.
func checkLayout(dir, name string) report {
	var r report
	for _, d := range append([]string{filepath.Join("cmd", name)}, templateDirs...) {
		if info, err := os.Stat(filepath.Join(dir, d)); err != nil || !info.IsDir() {
			r.problem("no folder %s", d)
		}
	}
	r.saw("folders cmd/%s, %s", name, strings.Join(templateDirs, ", "))

	mainGo := filepath.Join(dir, "cmd", name, "main.go")
	if f, err := parser.ParseFile(token.NewFileSet(), mainGo, nil, 0); err != nil {
		r.problem("cmd/%s/main.go: %v", name, err)
	} else if !callsSvcmainMain(f, name) {
		r.problem("cmd/%s/main.go does not call svcmain.Main(server.Module)", name)
	}
	r.saw("cmd/%s/main.go calls svcmain.Main(server.Module)", name)

	if files := parseDir(filepath.Join(dir, "server"), &r); !declares(files, token.VAR, "Module") {
		r.problem("server declares no Module")
	}
	r.saw("server declares Module")
	if files := parseDir(filepath.Join(dir, "internal", "app", "porttest"), &r); !declaresFunc(files, "Run") {
		r.problem("internal/app/porttest has no func Run")
	}
	r.saw("porttest.Run")

	packages := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !holdsPackage(path) {
			return nil
		}
		packages++
		rel, _ := filepath.Rel(dir, path)
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(path, "doc.go"), nil, parser.PackageClauseOnly|parser.ParseComments)
		switch {
		case err != nil:
			r.problem("%s has no doc.go", filepath.ToSlash(rel))
		case f.Doc == nil:
			r.problem("%s/doc.go has no package comment", filepath.ToSlash(rel))
		}
		return nil
	})
	r.saw("doc.go with a package comment in each of its %d packages", packages)
	return r
}

// checkConstructor: internal/app has one constructor, func New(c Config) (*Service, error), with
// Config and Service structs of its own. A constructor is an exported function named New... or
// returning a pointer to one of the package's structs.
func checkConstructor(dir, _ string) report {
	var r report
	files := parseDir(filepath.Join(dir, "internal", "app"), &r)
	structs := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, s := range g.Specs {
					if ts := s.(*ast.TypeSpec); isStruct(ts.Type) {
						structs[ts.Name.Name] = true
					}
				}
			}
		}
	}
	var constructors []*ast.FuncDecl
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() {
				continue
			}
			if strings.HasPrefix(fn.Name.Name, "New") || returnsPointerTo(fn, structs) {
				constructors = append(constructors, fn)
			}
		}
	}
	var names []string
	for _, fn := range constructors {
		names = append(names, fn.Name.Name)
	}
	r.saw("exported constructors of internal/app: %v", names)
	if len(constructors) != 1 || constructors[0].Name.Name != "New" {
		r.problem("internal/app must have exactly one exported constructor, New; it has %v", names)
		return r
	}
	fn := constructors[0]
	params, results := fn.Type.Params.List, fn.Type.Results
	if len(params) != 1 || len(params[0].Names) > 1 || !isIdent(params[0].Type, "Config") || !structs["Config"] {
		r.problem("New must take one Config struct of the package")
	}
	if results == nil || len(results.List) != 2 || !isPointerTo(results.List[0].Type, "Service") || !structs["Service"] ||
		!isIdent(results.List[1].Type, "error") {
		r.problem("New must return (*Service, error), Service a struct of the package")
	}
	r.saw("New(Config) (*Service, error)")
	return r
}

// checkStoragePorts: internal/app declares the interface Store, and neither it nor any interface
// it embeds declares more than maxPortMethods methods of its own.
func checkStoragePorts(dir, _ string) report {
	var r report
	interfaces := map[string]*ast.InterfaceType{}
	for _, f := range parseDir(filepath.Join(dir, "internal", "app"), &r) {
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					interfaces[ts.Name.Name] = it
				}
			}
			return true
		})
	}
	if interfaces["Store"] == nil {
		r.problem("internal/app declares no Store interface")
		return r
	}
	var ports []string
	seen := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		own := 0
		for _, field := range interfaces[name].Methods.List {
			if len(field.Names) > 0 {
				own += len(field.Names)
				continue
			}
			if id, ok := field.Type.(*ast.Ident); ok && interfaces[id.Name] != nil {
				visit(id.Name)
			}
		}
		ports = append(ports, fmt.Sprintf("%s %d", name, own))
		if own > maxPortMethods {
			r.problem("%s declares %d methods, more than the %d of a port per aggregate: split it", name, own, maxPortMethods)
		}
	}
	visit("Store")
	r.saw("methods of its own per storage port (at most %d): %s", maxPortMethods, strings.Join(ports, ", "))
	return r
}

// checkConsumers: every durable consumer (an events.ConsumerConfig literal) and every replay of
// the event log builds its handler with events.Handle (and a batch handler with
// events.HandleBatch), so one rule settles an event whose payload does not decode.
func checkConsumers(dir, _ string) report {
	var r report
	var consumers, replays []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			r.problem("%v", err)
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		eventsName := importName(f, repo+"pkg/events")
		if eventsName == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if !isSelector(n.Type, eventsName, "ConsumerConfig") {
					return true
				}
				consumers = append(consumers, rel)
				handler := keyed(n, "Handler")
				if handler == nil || !isHandleCall(handler, eventsName) {
					r.problem("%s: the consumer's Handler is not built with %s.Handle", rel, eventsName)
				}
				if batch := keyed(n, "BatchHandler"); batch != nil && !isCallOf(batch, eventsName, "HandleBatch") {
					r.problem("%s: the consumer's BatchHandler is not built with %s.HandleBatch", rel, eventsName)
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Replay" && len(n.Args) == 3 {
					replays = append(replays, rel)
					if !isHandleCall(n.Args[2], eventsName) {
						r.problem("%s: the replay's handler is not built with %s.Handle", rel, eventsName)
					}
				}
			}
			return true
		})
		return nil
	})
	if len(consumers)+len(replays) == 0 {
		r.saw("no durable consumer or replay")
	} else {
		r.saw("%d durable consumers %v and %d replays %v read events through events.Handle", len(consumers), consumers, len(replays), replays)
	}
	return r
}

// parseDir parses the package in dir without its tests; a parse error is a problem of r.
func parseDir(dir string, r *report) []*ast.File {
	entries, err := os.ReadDir(dir)
	if err != nil {
		r.problem("%v", err)
		return nil
	}
	var files []*ast.File
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			r.problem("%v", err)
			continue
		}
		files = append(files, f)
	}
	return files
}

// holdsPackage reports whether dir has a Go file of its own (tests included).
func holdsPackage(dir string) bool {
	entries, _ := os.ReadDir(dir)
	return slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return !e.IsDir() && strings.HasSuffix(e.Name(), ".go") })
}

// callsSvcmainMain reports whether f calls svcmain.Main(server.Module) with the shared svcmain and
// the service's own server package.
func callsSvcmainMain(f *ast.File, name string) bool {
	svcmain, server := importName(f, repo+"pkg/svcmain"), importName(f, repo+"services/"+name+"/server")
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if ok && svcmain != "" && server != "" && isSelector(call.Fun, svcmain, "Main") && len(call.Args) == 1 &&
			isSelector(call.Args[0], server, "Module") {
			found = true
		}
		return !found
	})
	return found
}

// importName is the name f refers to the import path by, "" when f does not import it.
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == path {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return path[strings.LastIndex(path, "/")+1:]
		}
	}
	return ""
}

// declares reports whether a top-level declaration of kind tok (var, const, type) names name.
func declares(files []*ast.File, tok token.Token, name string) bool {
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != tok {
				continue
			}
			for _, s := range g.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok && slices.ContainsFunc(vs.Names, func(id *ast.Ident) bool { return id.Name == name }) {
					return true
				}
			}
		}
	}
	return false
}

// declaresFunc reports whether a top-level function (no method) is named name.
func declaresFunc(files []*ast.File, name string) bool {
	for _, f := range files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == name {
				return true
			}
		}
	}
	return false
}

func isStruct(e ast.Expr) bool { _, ok := e.(*ast.StructType); return ok }

func isIdent(e ast.Expr, name string) bool { id, ok := e.(*ast.Ident); return ok && id.Name == name }

func isPointerTo(e ast.Expr, name string) bool {
	star, ok := e.(*ast.StarExpr)
	return ok && isIdent(star.X, name)
}

// returnsPointerTo reports whether fn's first result is a pointer to one of structs.
func returnsPointerTo(fn *ast.FuncDecl, structs map[string]bool) bool {
	if fn.Type.Results == nil || len(fn.Type.Results.List) == 0 {
		return false
	}
	star, ok := fn.Type.Results.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && structs[id.Name]
}

// isSelector reports whether e is pkg.name.
func isSelector(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == name && isIdent(sel.X, pkg)
}

// isHandleCall reports whether e is a call of events.Handle, with or without type arguments.
func isHandleCall(e ast.Expr, eventsName string) bool {
	return isCallOf(e, eventsName, "Handle")
}

// isCallOf reports whether e calls eventsName.fn, with or without type arguments.
func isCallOf(e ast.Expr, eventsName, fn string) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	fun := call.Fun
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	return isSelector(fun, eventsName, fn)
}

// keyed is the value of the field key in a keyed composite literal, nil when it is not set.
func keyed(lit *ast.CompositeLit, key string) ast.Expr {
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, key) {
			return kv.Value
		}
	}
	return nil
}
