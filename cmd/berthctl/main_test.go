package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// isolate runs berthctl as on a machine where no Berth is configured or running: no berthctl
// variable set, and a working directory without .berth/ above it.
func isolate(t *testing.T) {
	t.Helper()
	for _, name := range []string{"BERTH_ADMIN_TOKEN", "BERTH_DEMO_DIR", "BERTH_IDENTITY_GRPC_ADDR", "BERTH_TENANT_GRPC_ADDR",
		"BERTH_ANALYTICS_GRPC_ADDR", "BERTH_BILLING_GRPC_ADDR", "BERTH_WEBHOOK_GRPC_ADDR", "BERTH_OUTBOUND_GRPC_ADDR", "BERTH_API_KEY"} {
		t.Setenv(name, "")
	}
	t.Chdir(t.TempDir())
}

func TestUsageAndHelpPrintToStdoutAndSucceed(t *testing.T) {
	isolate(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "usage: berthctl [-o table|json]"},
		{[]string{"-help"}, "usage: berthctl [-o table|json]"},
		{[]string{"-h"}, "usage: berthctl [-o table|json]"},
		{[]string{"help"}, "usage: berthctl [-o table|json]"},
		{[]string{"help", "key-create"}, "usage: berthctl key-create -app ID -type read|write -name NAME"},
		{[]string{"key-create", "-help"}, "usage: berthctl key-create -app ID -type read|write -name NAME"},
		{[]string{"-o", "json", "webhook-events", "-h"}, "-outcome"},
	} {
		var out bytes.Buffer
		if err := run(c.args, &out); err != nil || !strings.Contains(out.String(), c.want) {
			t.Errorf("berthctl %v: %v, printed %q; want %q", c.args, err, out.String(), c.want)
		}
	}
}

// TestEveryCommandsHelpDescribesEachFlagItsSynopsisNames holds the command table to the flags the
// families define: a synopsis naming a flag no family defines would make the command unusable.
func TestEveryCommandsHelpDescribesEachFlagItsSynopsisNames(t *testing.T) {
	isolate(t)
	for _, c := range commands {
		var out bytes.Buffer
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s -help panicked: %v", c.name, r)
				}
			}()
			if err := run([]string{c.name, "-help"}, &out); err != nil {
				t.Errorf("%s -help: %v", c.name, err)
			}
		}()
		for _, f := range append(c.flags(), c.required...) {
			if !strings.Contains(out.String(), "  -"+f+" ") {
				t.Errorf("%s -help does not describe -%s:\n%s", c.name, f, out.String())
			}
		}
	}
}

func TestAnUnknownCommandIsAUsageErrorWithAHint(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{{"frobnicate"}, {"help", "frobnicate"}, {"-nosuchflag", "catalog"}} {
		err := run(args, &bytes.Buffer{})
		if !errors.As(err, new(usageError)) || strings.Contains(err.Error(), "\n") {
			t.Errorf("berthctl %v: %v, want one line refusing the command line", args, err)
		}
	}
	if err := run([]string{"frobnicate"}, &bytes.Buffer{}); !strings.Contains(err.Error(), "berthctl help") {
		t.Errorf("no hint: %v", err)
	}
}

func TestFlagsAreCheckedBeforeAnyCall(t *testing.T) {
	// No admin token and no Berth: a command that got as far as a call would fail otherwise.
	isolate(t)
	const app = "0b3c6a57-1f0e-4c8e-9a57-3d2f8e4b1c6d"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"key-create", "-type", "read", "-name", "n"}, "key-create: -app is required"},
		{[]string{"key-create", "-app", app, "-type", "admin", "-name", "n"}, "key-create: -type must be read or write"},
		{[]string{"key-create", "-app", "42", "-type", "read", "-name", "n"}, "-app must be a UUID"},
		{[]string{"project-create", "-name", "n", "-app", app}, "-app is not a flag of project-create"},
		{[]string{"project-create", "-name", "  "}, "-name is required"},
		{[]string{"catalog", "-app", app, "extra"}, `unexpected argument "extra"`},
		{[]string{"catalog", "-app", app, "-o", "yaml"}, "-o must be table or json"},
		{[]string{"-o", "yaml", "catalog", "-app", app}, "-o must be table or json"},
		{[]string{"-billing", "billing", "catalog", "-app", app}, `-billing="billing": must be host:port`},
		{[]string{"catalog", "-app"}, "flag needs an argument: -app"},
		{[]string{"connection-create", "-app", app, "-provider", "pspz"}, "-provider must be pspx or pspy"},
		{[]string{"app-branding", "-app", app, "-default-language", "fr"}, "-default-language must be en or de"},
		{[]string{"app-branding", "-display-name", "Shop"}, "app-branding: -app is required"},
		{[]string{"connection-rotate", "-connection", app, "-retire-webhook-secret", app, "-retire-webhook-secret", "x"}, "-retire-webhook-secret must be a UUID"},
		{[]string{"catalog-price-create", "-app", app, "-product", "Pro", "-amount", "ten"}, "-amount"},
		{[]string{"operator-token", "-member", app, "-ttl", "-1"}, "-ttl must be"},
		{[]string{"webhook-events", "-outcome", "lost"}, "-outcome must be received, applied, ignored, rejected or failed"},
		{[]string{"webhook-events", "-provider", "pspz"}, "-provider"},
		{[]string{"webhook-events", "-limit", "0"}, "-limit"},
		{[]string{"webhook-events", "-limit", "1001"}, "-limit"},
		{[]string{"webhook-events", "-since", "yesterday"}, "-since"},
		{[]string{"webhook-events", "-until", "2026-11-01"}, "-until"},
		{[]string{"webhook-events", "-since", "2026-11-02T00:00:00Z", "-until", "2026-11-01T00:00:00Z"}, "after -since"},
		{[]string{"webhook-replay"}, "name -id"},
		{[]string{"webhook-replay", "-connection", app, "-since", "2026-11-01T00:00:00Z"}, "name -id"},
		{[]string{"webhook-replay", "-id", app, "-connection", app}, "not both"},
		{[]string{"analytics-rebuild", "now"}, "unexpected argument"},
		{[]string{"gen-secrets", "-app", app}, "flag provided but not defined: -app"},
	} {
		err := run(c.args, &bytes.Buffer{})
		if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("berthctl %v: %v, want a usage error saying %q", c.args, err, c.want)
		}
	}
	// With valid flags the same commands go on to look for Berth, and find none.
	if err := run([]string{"catalog", "-app", app}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no admin token") {
		t.Errorf("valid flags without Berth: %v", err)
	}
}

func TestOneLineJoinsASettingsRefusal(t *testing.T) {
	err := errors.Join(errors.New("BERTH_A is required: a"), errors.New(`BERTH_B="x": must be host:port`))
	if got := oneLine(err); got != `BERTH_A is required: a; BERTH_B="x": must be host:port` {
		t.Fatalf("oneLine = %q", got)
	}
}
