package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// example is one berthctl command line of the documentation.
type example struct {
	where string            // file:line
	env   map[string]string // NAME=value words before the command
	args  []string
}

// invocationPrefixes start a documented berthctl command line.
var invocationPrefixes = []string{"berthctl ", "go run ./cmd/berthctl "}

// docsExamples reads every berthctl line in the fenced code blocks of README.md and docs/*.md, in
// that order: continuation lines joined, comments dropped, leading NAME=value words taken as the
// line's environment.
func docsExamples(t *testing.T, root string) []example {
	t.Helper()
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	var all []example
	for _, page := range append([]string{filepath.Join(root, "README.md")}, pages...) {
		f, err := os.Open(page)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		inCode, pending, start := false, "", 0
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inCode = !inCode
				continue
			}
			if !inCode {
				continue
			}
			if pending == "" {
				start = n
			}
			if cont, ok := strings.CutSuffix(line, `\`); ok {
				pending += cont + " "
				continue
			}
			logical := pending + line
			pending = ""
			if !strings.Contains(logical, "berthctl ") {
				continue // diagrams and other commands need not split as sh would
			}
			// A placeholder such as <app id> stays one word (its blanks made no-break spaces).
			words, err := shellWords(placeholder.ReplaceAllStringFunc(logical, func(p string) string { return strings.ReplaceAll(p, " ", nbsp) }))
			if err != nil {
				t.Fatalf("%s:%d: %v", page, start, err)
			}
			ex := example{where: fmt.Sprintf("%s:%d", filepath.Base(page), start), env: map[string]string{}}
			for len(words) > 0 && assignment.MatchString(words[0]) {
				name, value, _ := strings.Cut(words[0], "=")
				ex.env[name], words = value, words[1:]
			}
			cmdline := strings.Join(words, " ") + " "
			for _, p := range invocationPrefixes {
				if strings.HasPrefix(cmdline, p) {
					ex.args = words[len(strings.Fields(p)):]
					all = append(all, ex)
				}
			}
		}
		_ = f.Close()
	}
	return all
}

// shellWords splits a command line as sh does for the documentation's lines: words separated by
// blanks, single and double quotes, and a # that starts a word begins a comment.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case r == '#' && !inWord:
			return words, nil
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// captures name the placeholder a creating command's printed id fills.
var captures = map[string]string{
	"project-create": "<project id>", "app-create": "<app id>", "tenant-create": "<tenant id>", "member-add": "<member id>",
	"connection-create": "<connection id>", "promotion-create": "<promotion id>", "user-create": "<user id>",
}

const nbsp = "\u00a0"

var (
	placeholder = regexp.MustCompile(`<[^<>]+>`)
	assignment  = regexp.MustCompile(`^[A-Z_]+=`)
)

// TestTheDocsExamplesRunAgainstTheAllInOne runs every berthctl line of the README and docs/
// against a running all-in-one that berthctl finds as it finds `make run`'s, through the
// .berth/demo.json of an ancestor of its working directory, so the examples cannot drift from
// the CLI.
func TestTheDocsExamplesRunAgainstTheAllInOne(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	examples := docsExamples(t, root)
	if len(examples) < 30 {
		t.Fatalf("found %d berthctl examples in the docs, want the provisioning walk-through's 30 or more", len(examples))
	}

	env := stacktest.Start(t, "berthctl-docs", "http://localhost:3000/callback")
	isolate(t)
	dir, _ := os.Getwd()
	addrs := map[string]string{}
	for _, m := range allinone.Modules {
		addrs[m.Name] = env.Stack.Addr(m.Name)
	}
	if _, err := seed.WriteFile(filepath.Join(dir, seed.DefaultDir), seed.File{Demo: env.App, AdminToken: env.AdminToken, GRPC: addrs}); err != nil {
		t.Fatal(err)
	}
	// Two folders below .berth/, as in a checkout's service folder.
	sub := filepath.Join(dir, "some", "folder")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)

	values := map[string]string{"<appId>": env.App.AppID, "<read key>": env.App.ReadKey, "<stored call id>": storedCall(t, env)}
	for _, ex := range examples {
		// fill replaces the placeholders of a word, in the arguments and in the variables alike.
		fill := func(word string) string {
			return placeholder.ReplaceAllStringFunc(word, func(p string) string {
				p = strings.ReplaceAll(p, nbsp, " ")
				if v, ok := values[p]; ok {
					return v
				}
				t.Fatalf("%s: no line before it prints %s", ex.where, p)
				return ""
			})
		}
		args := make([]string, len(ex.args))
		for i, a := range ex.args {
			args[i] = fill(a)
		}
		for name, v := range ex.env {
			t.Setenv(name, fill(v))
		}
		var out bytes.Buffer
		err := run(append([]string{"-o", "json"}, args...), &out)
		for name := range ex.env {
			t.Setenv(name, "") // the variables were the line's alone
		}
		if err != nil {
			t.Fatalf("%s: berthctl %s: %v", ex.where, strings.Join(ex.args, " "), err)
		}
		if captures[firstCommand(args)] == "" {
			continue
		}
		var res struct {
			ID             string `json:"id"`
			WebhookSecrets []struct {
				ID string `json:"id"`
			} `json:"webhookSecrets"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.ID == "" {
			t.Fatalf("%s: printed no id: %s", ex.where, out.String())
		}
		values[captures[firstCommand(args)]] = res.ID
		if len(res.WebhookSecrets) > 0 {
			values["<secret id>"] = res.WebhookSecrets[0].ID
		}
	}
}

// firstCommand is the command of a command line (after any global flag and its value).
func firstCommand(args []string) string {
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") {
			i++ // every global flag takes a value
			continue
		}
		return args[i]
	}
	return ""
}

// storedCall has route 4 store a provider call (for the demo's pspy app, about a payment its
// provider does not know) and returns its id, as webhook-events lists it.
func storedCall(t *testing.T, env stacktest.Env) string {
	t.Helper()
	res, err := http.Post(env.Stack.BaseURL+"/api/v1/webhooks/pspy?paymentProviderUuid="+env.App.PspyApp.ProviderUUID,
		"application/x-www-form-urlencoded", strings.NewReader("id=tr_docs1"))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	var out bytes.Buffer
	t.Setenv("BERTH_ADMIN_TOKEN", env.AdminToken)
	defer t.Setenv("BERTH_ADMIN_TOKEN", "")
	if err := run([]string{"-webhook", env.Stack.Addr("webhook"), "-o", "json", "webhook-events", "-provider", "pspy"}, &out); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list.Events) == 0 {
		t.Fatalf("stored call: %s (%v)", out.String(), err)
	}
	return list.Events[0].ID
}
