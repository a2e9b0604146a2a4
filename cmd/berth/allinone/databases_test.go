package allinone_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/stacktest"
	"github.com/berthhq/berth/pkg/config"
)

// TestTheAllInOneSaysWhichDatabasesItUsesAndWhichItCreated protects the one line a run on
// PostgreSQL starts with: the first start names every module's database as used and created, the
// next one the same databases, none created.
func TestTheAllInOneSaysWhichDatabasesItUsesAndWhichItCreated(t *testing.T) {
	base := stacktest.DatabaseServer(t)
	t.Setenv("BERTH_DATABASE_URL", base)
	t.Setenv("BERTH_API_KEY_PEPPER", stacktest.RandomHex(16))
	t.Setenv("BERTH_SECRET_KEY", stacktest.RandomHex(32))
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	var all []string
	for _, m := range allinone.Modules {
		all = append(all, name+"_"+m.Name)
	}
	for _, want := range []struct{ run, created string }{{"first", strings.Join(all, ", ")}, {"second", ""}} {
		own, err := config.Parse(config.OS, allinone.Settings())
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := allinone.FromSettings(context.Background(), own, slog.New(slog.NewJSONHandler(&out, nil))); err != nil {
			t.Fatalf("%s start: %v", want.run, err)
		}
		var lines []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var line map[string]any
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatalf("%s start logged %q", want.run, l)
			}
			if line["msg"] == "databases" {
				lines = append(lines, line)
			}
		}
		if len(lines) != 1 {
			t.Fatalf("%s start: %d databases lines in %s, want one", want.run, len(lines), out.String())
		}
		if got := lines[0]["using"]; got != strings.Join(all, ", ") {
			t.Errorf("%s start uses %q, want %q", want.run, got, strings.Join(all, ", "))
		}
		if got := lines[0]["created"]; got != want.created {
			t.Errorf("%s start created %q, want %q", want.run, got, want.created)
		}
		if strings.Contains(out.String(), "postgres@") {
			t.Errorf("the line shows the database URL's user: %s", out.String())
		}
	}
}
