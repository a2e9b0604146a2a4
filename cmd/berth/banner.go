package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/gateway/apidocs"
	"github.com/berthhq/berth/pkg/ops"
)

// printBanner tells a new user what the run offers, every line at most seed.Width columns: the
// pages to open first, the demo's ids and keys as shell exports, then short commands that use
// them, and last what operators need.
// A demo an earlier run on the same databases seeded (resumed) is said to be so.
func printBanner(w io.Writer, s *allinone.Stack, demo seed.Demo, resumed bool, demoFile, adminToken string) {
	p := func(lines ...string) {
		for _, l := range lines {
			_, _ = fmt.Fprintln(w, l)
		}
	}
	block := func(title string, cmds ...[]string) {
		p("", title)
		for _, c := range cmds {
			p(c...)
		}
	}
	base := s.BaseURL
	p("", "Berth is running at "+base+"  (Ctrl-C stops it)", "",
		"  Start here  "+base+allinone.DevLandingPath,
		"  Sign up     "+base+allinone.DevSignUpPath,
		"  Mailbox     "+base+allinone.DevMailboxPath,
		"  API docs    "+base+apidocs.Path)
	if s.Example.Served() {
		p("  Example app " + base + allinone.ExamplePath)
	}
	if demo.Console.Email != "" {
		p("  Console     "+demo.Console.URL,
			"              sign in as "+demo.Console.Email+", password "+demo.Console.Password)
	}
	p("")
	origin := ""
	if resumed {
		origin = " (from an earlier run)"
	}
	p(wrap("The demo's ids and keys"+origin+", also in "+demoFile+":", seed.Width)...)
	p(demo.Exports()...)
	p("# BERTH_STATE protects the demo's sign-in and payment redirects against CSRF")
	block("# Call the API as the demo app:", demo.Curls()...)
	block("# Pay: start a checkout, open data.nextAction.url&state=$BERTH_STATE and pay\n"+
		"# with card 4242 4242 4242 4242; you land on "+allinone.DevPaidPath+":", demo.CheckoutCurl())
	block("# Move the sandboxes' clock a month on (renewals, webhooks):", demo.ClockCurl())
	p("")
	p(wrap("gRPC: "+grpcAddrs(s), seed.Width)...)
	p("Health "+base+ops.ReadyPath+"  metrics "+base+ops.MetricsPath,
		"Provision more with berthctl, which finds this run through demo.json:",
		"go run ./cmd/berthctl help",
		"# The admin token, for other gRPC clients of the admin APIs:",
		"export BERTH_ADMIN_TOKEN="+adminToken)
}

// wrap breaks text into lines of at most width columns at spaces; continuation lines are indented.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = "  " + word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}
