package seed

import (
	"fmt"
	"strings"
	"time"
)

// Width is the terminal width the printed commands fit: every line of Exports and of the
// commands is at most this long, so nothing wraps in a default terminal.
const Width = 80

// Exports are the shell lines that put the demo's ids and keys into variables the printed
// commands use (BERTH_URL, BERTH_APP, BERTH_READ_KEY, ...). A value too long for one line goes on
// with a backslash-newline, which the shell removes, so the lines paste as they are.
func (d Demo) Exports() []string {
	var lines []string
	for _, v := range [][2]string{
		{"BERTH_URL", d.BaseURL}, {"BERTH_APP", d.AppID}, {"BERTH_READ_KEY", d.ReadKey},
		{"BERTH_WRITE_KEY", d.WriteKey}, {"BERTH_TENANT", d.TenantID}, {"BERTH_USER", d.UserIDs[0]},
		{"BERTH_STATE", d.State}, {"BERTH_PRICE", d.Pspx.Prices.Monthly}, {"BERTH_TAX_RATE", d.Pspx.TaxRate},
	} {
		line := "export " + v[0] + "=" + v[1]
		for len(line) > Width {
			lines = append(lines, line[:Width-1]+`\`)
			line = line[Width-1:]
		}
		lines = append(lines, line)
	}
	return lines
}

// The header groups of a call with the demo app's read or write key.
var (
	readKey  = []string{`-H "X-API-KEY: $BERTH_READ_KEY"`, `-H "X-API-KEY-TYPE: read"`, `-H "X-CLIENT-ID: $BERTH_APP"`}
	writeKey = []string{`-H "X-API-KEY: $BERTH_WRITE_KEY"`, `-H "X-API-KEY-TYPE: write"`, `-H "X-CLIENT-ID: $BERTH_APP"`}
	jsonBody = `-H "Content-Type: application/json"`
)

// Curls are commands, each a list of lines, that call the demo app's routes through the variables
// of Exports.
func (d Demo) Curls() [][]string {
	today := time.Now().UTC().Format(time.DateOnly)
	call := func(method string, key []string, rest ...string) []string {
		parts := []string{"curl -s"}
		if method != "" {
			parts = append(parts, "-X "+method)
		}
		return command(append(append(parts, key...), rest...))
	}
	return [][]string{
		call("", readKey, `"$BERTH_URL/v1/tenants/$BERTH_TENANT"`),
		call("", readKey, `"$BERTH_URL/v1/users/$BERTH_USER"`),
		call("", readKey, `"$BERTH_URL/v1/users/ada@example.com"`),
		call("", readKey, `"$BERTH_URL/v1/apps/$BERTH_APP/user-roles"`),
		call("", readKey, `"$BERTH_URL/v1/apps/$BERTH_APP/public-keys"`),
		call("PUT", writeKey, jsonBody, `-d '{"user":{"nickname":"ada"}}'`, `"$BERTH_URL/v1/users/$BERTH_USER"`),
		call("PUT", writeKey, jsonBody, `-d '{"kind":"tenant","companyName":"Demo GmbH"}'`, `"$BERTH_URL/v1/tenants/$BERTH_TENANT"`),
		call("", readKey, `"$BERTH_URL/v1/apps/$BERTH_APP/promotions"`),
		call("PUT", writeKey, fmt.Sprintf(`"$BERTH_URL/v1/users/$BERTH_USER/promotion-codes/%s"`, d.PromotionCode)),
		call("", readKey, fmt.Sprintf(`"$BERTH_URL/api/v1/analytics/sign-ins?from=%s&to=%s"`, today, today)),
	}
}

// CheckoutCurl starts a monthly subscription checkout on pspx for the demo tenant, with
// BERTH_STATE. The answer's data.nextAction.url, with &state=$BERTH_STATE appended, is the page to
// open in a browser.
func (d Demo) CheckoutCurl() []string {
	// The body is one shell word over several lines: each line closes its single quote before the
	// backslash-newline (inside quotes it would stay) and the next reopens it, unindented.
	body := strings.Join([]string{`-d '{"price":"'$BERTH_PRICE'",`, `"taxRate":"'$BERTH_TAX_RATE'","mode":"subscription",`,
		`"quantity":1,"paymentMethodType":"card",`, `"state":"'$BERTH_STATE'","test":true}'`}, "'\\\n'")
	return command(append(append([]string{"curl -s -X POST"}, writeKey...), jsonBody, body,
		`"$BERTH_URL/v1/tenants/$BERTH_TENANT/checkout-sessions"`))
}

// ClockCurl moves the sandboxes' clock a month (31 days) on.
func (d Demo) ClockCurl() []string {
	return command([]string{"curl -s -X POST", `-d '{"seconds":2678400}'`, `"$BERTH_URL/_sandbox/clock/advance"`})
}

// command lays parts out as shell lines of at most Width columns: parts go on a line while they
// fit, and a line that has more after it ends with " \" and the next starts indented. A part may
// hold newlines of its own (one word continued over lines): what follows each starts its line
// unindented, since leading blanks there would split the word.
func command(parts []string) []string {
	const indent = "    "
	var lines []string
	line := ""
	for _, p := range parts {
		switch {
		case line == "":
			line = p
		case len(line)+1+len(p)+2 <= Width && !strings.Contains(p, "\n"):
			line += " " + p
		default:
			lines = append(lines, line+` \`)
			line = indent + p
		}
		for {
			head, tail, ok := strings.Cut(line, "\n")
			if !ok {
				break
			}
			lines = append(lines, head)
			line = tail
		}
	}
	return append(lines, line)
}
