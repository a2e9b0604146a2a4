package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/config"
)

// TestGenSecretsPrintsValuesTheSecretSettingsAccept parses gen-secrets' output with the settings'
// own declarations, so that the command and the rules cannot drift apart.
func TestGenSecretsPrintsValuesTheSecretSettingsAccept(t *testing.T) {
	isolate(t)
	var first, second bytes.Buffer
	if err := run([]string{"gen-secrets"}, &first); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"gen-secrets"}, &second); err != nil || first.String() == second.String() {
		t.Fatalf("a second run printed the same values (%v)", err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(first.String()), "\n") {
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok || !strings.HasPrefix(line, "export ") {
			t.Fatalf("not an export line: %q", line)
		}
		env[name] = value
	}
	if len(env) != len(secretSettings) {
		t.Fatalf("printed %v, want a value for each of %d settings", env, len(secretSettings))
	}
	v, err := config.Parse(func(name string) string { return env[name] }, secretSettings)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secretSettings {
		if n := len(v.Bytes(s.Name)); n < 32 {
			t.Errorf("%s: %d bytes, want at least 32", s.Name, n)
		}
	}
}

func TestTheSecretSettingsRefusalsSayHowToMakeAValue(t *testing.T) {
	_, err := config.Parse(func(string) string { return "" }, secretSettings)
	if err == nil {
		t.Fatal("missing secrets accepted")
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasSuffix(line, "make one with: berthctl gen-secrets") {
			t.Errorf("refusal without the hint: %q", line)
		}
	}
}
