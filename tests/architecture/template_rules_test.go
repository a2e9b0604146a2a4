package architecture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// demoService is a service that follows the template, as small as the rules allow: the files of
// services/demo, by path.
var demoService = map[string]string{
	"cmd/demo/doc.go": "// Command demo runs the demo service.\npackage main\n",
	"cmd/demo/main.go": `package main

import (
	"github.com/berthhq/berth/pkg/svcmain"
	"github.com/berthhq/berth/services/demo/server"
)

func main() { svcmain.Main(server.Module) }
`,
	"server/doc.go":          "// Package server builds the demo module.\npackage server\n",
	"server/server.go":       "package server\n\nvar Module = module.Module{Name: \"demo\", Build: build}\n",
	"internal/domain/doc.go": "// Package domain is the demo's model.\npackage domain\n",
	"internal/app/doc.go":    "// Package app is the demo's use cases.\npackage app\n",
	"internal/app/app.go": `package app

import "github.com/berthhq/berth/pkg/events"

// Config holds what the use cases depend on.
type Config struct{ Store Store }

// Service runs the use cases.
type Service struct{ store Store }

// New returns the use cases.
func New(c Config) (*Service, error) { return &Service{store: c.Store}, nil }

// Things stores things.
type Things interface {
	CreateThing(ctx context.Context, id string) error
	Thing(ctx context.Context, id string) (string, error)
}

// Store is every storage port.
type Store interface {
	Things
}

// Rebuild replays the log.
func (s *Service) Rebuild(ctx context.Context, log EventLog) error {
	_, err := log.Replay(ctx, types, events.Handle(s.apply))
	return err
}
`,
	"internal/app/imports.go":                        "package app\n\nimport \"github.com/berthhq/berth/pkg/events\"\n\nvar _ events.Event\n",
	"internal/app/porttest/doc.go":                   "// Package porttest is the demo's conformance suite.\npackage porttest\n",
	"internal/app/porttest/porttest.go":              "package porttest\n\nfunc Run(t *testing.T, newStore Factory) {}\n",
	"internal/convert/doc.go":                        "// Package convert maps the demo's messages.\npackage convert\n",
	"internal/adapters/grpcapi/doc.go":               "// Package grpcapi serves the demo.\npackage grpcapi\n",
	"internal/adapters/memory/doc.go":                "// Package memory is the demo's memory store.\npackage memory\n",
	"internal/adapters/postgres/doc.go":              "// Package postgres is the demo's Postgres store.\npackage postgres\n",
	"internal/adapters/postgres/migrations/0001.sql": "create table things (id text primary key);\n",
	"internal/adapters/other/doc.go":                 "// Package other consumes another context's events.\npackage other\n",
	"internal/adapters/other/consumer.go": `package other

import "github.com/berthhq/berth/pkg/events"

func Consume(ctx context.Context, bus events.Bus, inbox events.Inbox) (*events.Consumer, error) {
	return bus.Consume(ctx, events.ConsumerConfig{Durable: "demo-other", Inbox: inbox, Handler: events.Handle(apply)})
}
`,
}

// TestTheTemplateRulesCatchAViolationEach builds the demo service, which every rule passes, then
// breaks it one way at a time: exactly the rule that holds that part of the template must fail.
func TestTheTemplateRulesCatchAViolationEach(t *testing.T) {
	cases := []struct {
		name   string
		rule   string
		mutate func(t *testing.T, dir string)
	}{
		{"the template as it is", "", func(*testing.T, string) {}},
		{"no internal/convert", "layout", remove("internal/convert")},
		{"no grpcapi adapter", "layout", remove("internal/adapters/grpcapi")},
		{"main runs something else", "layout", replace("cmd/demo/main.go", "svcmain.Main(server.Module)", "svcmain.Main(other.Module)")},
		{"server exports no Module", "layout", replace("server/server.go", "var Module", "var module")},
		{"porttest has no Run", "layout", replace("internal/app/porttest/porttest.go", "func Run(", "func run(")},
		{"a package without doc.go", "layout", remove("internal/adapters/other/doc.go")},
		{"a doc.go without a package comment", "layout", write("internal/domain/doc.go", "package domain\n")},
		{"a second constructor", "constructor",
			write("internal/app/projector.go", "package app\n\ntype Projector struct{}\n\nfunc NewProjector(s Store) *Projector { return nil }\n")},
		{"a constructor by another name", "constructor",
			write("internal/app/make.go", "package app\n\nfunc Make(s Store) *Service { return nil }\n")},
		{"positional collaborators", "constructor",
			replace("internal/app/app.go", "func New(c Config) (*Service, error) { return &Service{store: c.Store}, nil }",
				"func New(store Store, clock func() time.Time) (*Service, error) { return nil, nil }")},
		{"no error to refuse a configuration with", "constructor",
			replace("internal/app/app.go", "func New(c Config) (*Service, error) { return &Service{store: c.Store}, nil }",
				"func New(c Config) *Service { return nil }")},
		{"no Store", "storage ports", replace("internal/app/app.go", "type Store interface", "type Storage interface")},
		{"a store of many aggregates", "storage ports", replace("internal/app/app.go", "type Store interface {\n\tThings\n}",
			"type Store interface {\n\tThings\n"+strings.Repeat("\tM(ctx context.Context) error\n", maxPortMethods+1)+"}")},
		{"an embedded port of many aggregates", "storage ports", replace("internal/app/app.go", "type Things interface {",
			"type Things interface {\n"+strings.Repeat("\tM(ctx context.Context) error\n", maxPortMethods-1))},
		{"a consumer with a handler of its own", "event consumers",
			replace("internal/adapters/other/consumer.go", "Handler: events.Handle(apply)", "Handler: apply")},
		{"a consumer without a handler", "event consumers",
			replace("internal/adapters/other/consumer.go", ", Handler: events.Handle(apply)", "")},
		{"a consumer with a batch handler built by HandleBatch", "",
			replace("internal/adapters/other/consumer.go", "Handler: events.Handle(apply)", "Handler: events.Handle(apply), BatchHandler: events.HandleBatch(applyAll)")},
		{"a consumer with a batch handler of its own", "event consumers",
			replace("internal/adapters/other/consumer.go", "Handler: events.Handle(apply)", "Handler: events.Handle(apply), BatchHandler: applyAll")},
		{"a replay with a handler of its own", "event consumers",
			replace("internal/app/app.go", "events.Handle(s.apply)", "s.apply")},
		{"events imported under another name", "", write("internal/adapters/other/consumer.go", aliasedConsumer("ev.Handle(apply)"))},
		{"events imported under another name, a handler of its own", "event consumers",
			write("internal/adapters/other/consumer.go", aliasedConsumer("apply"))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "services", "demo")
			for path, src := range demoService {
				write(path, src)(t, dir)
			}
			tc.mutate(t, dir)
			for _, rule := range templateRules {
				problems := rule.check(dir, "demo").problems
				switch {
				case rule.name == tc.rule && len(problems) == 0:
					t.Errorf("the %s rule passes it", rule.name)
				case rule.name != tc.rule && len(problems) > 0:
					t.Errorf("the %s rule fails it: %q", rule.name, problems)
				}
			}
		})
	}
}

// aliasedConsumer is the demo's consumer importing pkg/events as ev, with handler.
func aliasedConsumer(handler string) string {
	return `package other

import ev "github.com/berthhq/berth/pkg/events"

func Consume(ctx context.Context, bus ev.Bus, inbox ev.Inbox) (*ev.Consumer, error) {
	return bus.Consume(ctx, ev.ConsumerConfig{Durable: "demo-other", Inbox: inbox, Handler: ` + handler + `})
}
`
}

func write(path, src string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func remove(path string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(path))); err != nil {
			t.Fatal(err)
		}
	}
}

// replace replaces old, which must be there, with replacement in the file at path.
func replace(path, old, replacement string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(path))
		src, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), old) {
			t.Fatalf("%s holds no %q to replace", path, old)
		}
		if err := os.WriteFile(full, []byte(strings.Replace(string(src), old, replacement, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
