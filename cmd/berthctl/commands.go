package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// command is one berthctl command: what the usage and its help say, and the rules its flags are
// held to before anything is called.
type command struct {
	name string
	// service is the module whose admin API the command calls ("" for gen-secrets, which calls none).
	service string
	// apiKey is the type of the app's API key (BERTH_API_KEY) the command presents instead of the
	// admin token, for an app's own routes; "" presents the admin token only.
	apiKey string
	// synopsis is the command's flags as the usage shows them; the flags it names are the only ones
	// the command takes.
	synopsis string
	about    string
	// required flags must be given a value; ids must be UUIDs; enums must be one of their values
	// (each when given).
	required, ids []string
	enums         map[string][]string
	// timeout bounds the call (0: defaultTimeout).
	timeout time.Duration
}

const defaultTimeout = 30 * time.Second

var providers = []string{"pspx", "pspy"}

// verificationPolicies are the apps' email-verification policies (docs/accounts.md).
var verificationPolicies = []string{"required", "optional"}

// idpSlots are the apps' identity-provider slots (docs/accounts.md).
var idpSlots = []string{"idpA", "idpB", "idpC", "idpD"}

// mfaPolicies are the apps' second-factor policies (docs/accounts.md).
var mfaPolicies = []string{"off", "optional", "required"}

// commands are berthctl's commands, in the usage's order.
var commands = []command{
	{name: "project-create", service: "identity", synopsis: "-name NAME", about: "Create a project, which holds apps.",
		required: []string{"name"}},
	{name: "app-create", service: "identity", synopsis: "-project ID -name NAME [-redirect-uri URI ...] [-email-verification required|optional] [-mfa off|optional|required]",
		about: "Create an app of the project; -redirect-uri is repeatable. Users verify their address before signing in unless -email-verification optional; " +
			"they may enrol a second factor unless -mfa says otherwise.",
		required: []string{"project", "name"}, ids: []string{"project"}, enums: map[string][]string{"email-verification": verificationPolicies, "mfa": mfaPolicies}},
	{name: "app-disable", service: "identity", synopsis: "-app ID", about: "Disable the app: its keys and tokens are refused.",
		required: []string{"app"}, ids: []string{"app"}},
	{name: "app-enable", service: "identity", synopsis: "-app ID", about: "Enable a disabled app again.",
		required: []string{"app"}, ids: []string{"app"}},
	{name: "app-rotate-key", service: "identity", synopsis: "-app ID", about: "Rotate the app's signing key (logs out every user of the app).",
		required: []string{"app"}, ids: []string{"app"}},
	{name: "app-email-verification", service: "identity", synopsis: "-app ID -policy required|optional",
		about:    "Set whether the app's users verify their address before signing in (required) or may verify it later (optional, which lets sign-up tell who is registered).",
		required: []string{"app", "policy"}, ids: []string{"app"}, enums: map[string][]string{"policy": verificationPolicies}},
	{name: "app-mfa", service: "identity", synopsis: "-app ID -policy off|optional|required",
		about:    "Set whether the app's users may enrol a second factor (optional), must prove one at every sign-in (required) or neither (off).",
		required: []string{"app", "policy"}, ids: []string{"app"}, enums: map[string][]string{"policy": mfaPolicies}},
	{name: "app-redirect-uris", service: "identity", synopsis: "-app ID [-redirect-uri URI ...]",
		about:    "Replace the app's redirect URIs (-redirect-uri is repeatable; none leaves the app without any). Their origins are the app's browser origins.",
		required: []string{"app"}, ids: []string{"app"}},
	{name: "app-token-lifetimes", service: "identity", synopsis: "-app ID [-access-ttl SECONDS] [-refresh-ttl SECONDS]",
		about:    "Set how long the app's access and refresh tokens live (0: 15 minutes and 30 days); tokens issued before keep their expiry.",
		required: []string{"app"}, ids: []string{"app"}},
	{name: "app-passkey-sign-in", service: "identity", synopsis: "-app ID -policy on|off",
		about:    "Set whether the app's users may sign in with a passkey instead of the password (on) or use passkeys as a second factor only (off, the default).",
		required: []string{"app", "policy"}, ids: []string{"app"}, enums: map[string][]string{"policy": {"on", "off"}}},
	{name: "user-mfa-reset", service: "identity", synopsis: "-app ID -user ID",
		about:    "Remove the user's second factors and recovery codes, end the user's sessions and mail the user.",
		required: []string{"app", "user"}, ids: []string{"app", "user"}},
	{name: "app-origin-add", service: "identity", synopsis: "-app ID -origin URL",
		about: "Allow a browser origin scheme://host[:port] for CORS.", required: []string{"app", "origin"}, ids: []string{"app"}},
	{name: "app-origin-remove", service: "identity", synopsis: "-app ID -origin URL",
		about: "Take back an origin added with app-origin-add.", required: []string{"app", "origin"}, ids: []string{"app"}},
	{name: "app-origins", service: "identity", synopsis: "-app ID",
		about: "List the app's origins: added ones, its redirect URIs' and all it allows.", required: []string{"app"}, ids: []string{"app"}},
	{name: "app-branding", service: "identity",
		synopsis: "-app ID [-display-name NAME] [-accent-color #RRGGBB] [-logo-url HTTPS-URL] [-default-language en|de]",
		about: "Set the app's look on its hosted pages and mails and their default language. Every value is replaced: " +
			"one left out returns to the neutral look (no display name, the neutral colour, no logo, English).",
		required: []string{"app"}, ids: []string{"app"}, enums: map[string][]string{"default-language": {"en", "de"}}},
	{name: "app-idp-set", service: "identity",
		synopsis: "-app ID -slot idpA|idpB|idpC|idpD -display-name NAME -client-id ID [-discovery-url URL | -issuer URL -authorization-url URL -token-url URL -jwks-url URL] " +
			"[-userinfo-url URL] [-scope SCOPE ...] [-allowed-domain DOMAIN ...]",
		about: "Configure one of the app's identity-provider slots (OpenID Connect, or plain OAuth 2.0 with the endpoints named), replacing what it held; " +
			"-scope and -allowed-domain are repeatable. The client secret comes from IDP_CLIENT_SECRET, never from a flag; unset keeps the slot's stored one.",
		required: []string{"app", "slot", "display-name", "client-id"}, ids: []string{"app"}, enums: map[string][]string{"slot": idpSlots}},
	{name: "app-idp-clear", service: "identity", synopsis: "-app ID -slot idpA|idpB|idpC|idpD",
		about:    "Empty one of the app's identity-provider slots; the users it signed in keep their links.",
		required: []string{"app", "slot"}, ids: []string{"app"}, enums: map[string][]string{"slot": idpSlots}},
	{name: "app-idps", service: "identity", synopsis: "-app ID",
		about: "List the app's identity-provider slots (whether a client secret is stored, not the secret).", required: []string{"app"}, ids: []string{"app"}},
	{name: "key-create", service: "identity", synopsis: "-app ID -type read|write -name NAME [-description TEXT]",
		about:    "Create an API key of the app. Its secret is printed once: Berth keeps only its hash.",
		required: []string{"app", "type", "name"}, ids: []string{"app"}, enums: map[string][]string{"type": {"read", "write"}}},
	{name: "role-create", service: "identity", synopsis: "-app ID -name NAME", about: "Create a user role of the app.",
		required: []string{"app", "name"}, ids: []string{"app"}},
	{name: "user-create", service: "identity",
		synopsis: "-app ID -email EMAIL [-tenant ID] [-name NAME] [-given-name G] [-family-name F] [-language L]",
		about:    "Create a user of the app, of the tenant if one is named.", required: []string{"app", "email"}, ids: []string{"app", "tenant"}},
	{name: "member-add", service: "identity", synopsis: "-project ID -email EMAIL -name NAME",
		about: "Add a member of the project (an operator of its apps) and mail them the console's invitation link (valid 7 days). " +
			"Without a mailer (BERTH_SMTP_ADDR) the member is added for operator tokens only.", required: []string{"project", "email", "name"}, ids: []string{"project"}},
	{name: "operator-token", service: "identity", synopsis: "-member ID [-ttl SECONDS]",
		about:    "Issue a project member's operator token, the bearer token of route 2 (-ttl: default 3600, 0 = 3600, at most 86400).",
		required: []string{"member"}, ids: []string{"member"}},
	{name: "tenant-create", service: "tenant", synopsis: "-app ID -name NAME [-description TEXT]", about: "Create a tenant of the app.",
		required: []string{"app", "name"}, ids: []string{"app"}},

	{name: "connection-create", service: "billing", synopsis: "-app ID -provider pspx|pspy",
		about: "Connect the app to a payment provider (the app's first connection is the one its checkouts use). " +
			"The provider's keys come from PSP_TEST_SECRET_KEY, PSP_LIVE_SECRET_KEY, PSP_TEST_WEBHOOK_SECRET and PSP_LIVE_WEBHOOK_SECRET, " +
			"never from flags, which shell history and the process list keep.",
		required: []string{"app", "provider"}, ids: []string{"app"}, enums: map[string][]string{"provider": providers}},
	{name: "connection-rotate", service: "billing", synopsis: "-connection ID [-retire-webhook-secret ID ...]",
		about:    "Store the connection's new keys from the PSP_* variables (as connection-create), and retire webhook secrets.",
		required: []string{"connection"}, ids: []string{"connection", "retire-webhook-secret"}},
	{name: "app-billing", service: "billing", synopsis: "-app ID", about: "Show the app's connections (which secrets are set, not the secrets) and billing settings.",
		required: []string{"app"}, ids: []string{"app"}},
	{name: "app-billing-set", service: "billing",
		synopsis: "-app ID [-connection ID] [-return-url URL] [-freeze-after N] [-one-time-days N] [-referral-promotion ID] [-renewal-line TEXT]",
		about: "Change the app's billing settings; only the flags given change. -renewal-line is the renewal invoice lines' text, " +
			`{quantity} {start} {end} filled in ("" = the provider's).`,
		required: []string{"app"}, ids: []string{"app", "connection", "referral-promotion"}},
	{name: "catalog-price-create", service: "billing",
		synopsis: `-app ID -product NAME -amount MINOR_UNITS [-currency EUR] [-interval "1 month"]`,
		about:    "Create a price in the app's catalog (and at its provider); no -interval is a one-time price.",
		required: []string{"app", "product", "amount"}, ids: []string{"app"}},
	{name: "catalog-tax-rate-create", service: "billing", synopsis: "-app ID -name NAME -basis-points 1900 [-inclusive]",
		about: "Create a tax rate in the app's catalog.", required: []string{"app", "name", "basis-points"}, ids: []string{"app"}},
	{name: "catalog", service: "billing", synopsis: "-app ID", about: "List the app's catalog: prices and tax rates.",
		required: []string{"app"}, ids: []string{"app"}},
	{name: "promotion-create", service: "billing",
		synopsis: "-app ID -code CODE -name NAME [-description T] [-free-units N] [-free-days N] [-valid-from DATE] [-valid-until DATE] [-max-redemptions N]",
		about:    "Create a promotion code of the app (dates YYYY-MM-DD or RFC 3339; -max-redemptions 0 = unlimited).",
		required: []string{"app", "code", "name"}, ids: []string{"app"}},
	{name: "promotion-activate", service: "billing", synopsis: "-app ID -promotion ID", about: "Make the promotion redeemable again.",
		required: []string{"app", "promotion"}, ids: []string{"app", "promotion"}},
	{name: "promotion-deactivate", service: "billing", synopsis: "-app ID -promotion ID", about: "Stop the promotion's redemptions.",
		required: []string{"app", "promotion"}, ids: []string{"app", "promotion"}},
	{name: "promotions", service: "billing", synopsis: "-app ID", about: "List the app's promotions with their redemption counts, active or not.",
		required: []string{"app"}, ids: []string{"app"}},
	{name: "promotion-limits", service: "billing", synopsis: "-app ID -promotion ID [-max-redemptions N] [-valid-from DATE] [-valid-until DATE]",
		about: "Change how often and when the promotion may be redeemed; only the flags given change, an empty date removes that bound. " +
			"-max-redemptions 0 = unlimited, and never below the redemptions made.",
		required: []string{"app", "promotion"}, ids: []string{"app", "promotion"}},
	{name: "promotion-redemptions", service: "billing", synopsis: "-app ID -promotion ID [-limit 1..100] [-cursor C]",
		about: "List the promotion's redemptions and referral rewards, newest first, with what each granted; " +
			"-cursor with the nextCursor printed continues.",
		required: []string{"app", "promotion"}, ids: []string{"app", "promotion"}},
	{name: "tenant-billing", service: "billing", synopsis: "-app ID -tenant ID [-test]",
		about: "Show the tenant's money: billing state and why it is frozen, its checkouts and charges, " +
			"the provider's newest invoices (live, or test with -test) and the promotions it received.",
		required: []string{"app", "tenant"}, ids: []string{"app", "tenant"}},
	{name: "tenant-freeze", service: "billing", synopsis: "-app ID -tenant ID",
		about:    "Freeze the tenant; the freeze stays until tenant-unfreeze (a payment lifts only a freeze for failed payments).",
		required: []string{"app", "tenant"}, ids: []string{"app", "tenant"}},
	{name: "tenant-unfreeze", service: "billing", synopsis: "-app ID -tenant ID", about: "Lift the tenant's freeze.",
		required: []string{"app", "tenant"}, ids: []string{"app", "tenant"}},

	{name: "webhook-events", service: "webhook",
		synopsis: "[-connection ID] [-outcome received|applied|ignored|rejected|failed] [-provider pspx|pspy] [-since RFC3339] [-until RFC3339] [-limit 1..1000]",
		about:    "List the provider calls routes 3 and 4 stored, newest first (-until is exclusive).",
		ids:      []string{"connection"}, enums: map[string][]string{"outcome": {"received", "applied", "ignored", "rejected", "failed"}, "provider": providers}},
	{name: "webhook-replay", service: "webhook", synopsis: "-id ID | -connection ID -since RFC3339 -until RFC3339",
		about: "Apply stored calls again, oldest first; an applied one changes nothing.", ids: []string{"id", "connection"}},

	{name: "webhook-endpoint-create", service: "outbound", apiKey: "write", synopsis: "-app ID -url URL -event TYPE [-event TYPE ...] [-description TEXT]",
		about: "Register a webhook endpoint of the app for the event types (or *); prints its secret, this once. " +
			"Presents the app's write API key from BERTH_API_KEY.",
		required: []string{"app", "url", "event"}, ids: []string{"app"}},
	{name: "webhook-endpoints", service: "outbound", apiKey: "write", synopsis: "-app ID", about: "List the app's webhook endpoints (BERTH_API_KEY: the app's write key).",
		required: []string{"app"}, ids: []string{"app"}},
	{name: "webhook-endpoint-update", service: "outbound", apiKey: "write",
		synopsis: "-app ID -endpoint ID [-url URL] [-event TYPE ...] [-description TEXT] [-disabled true|false]",
		about:    "Change the fields given of a webhook endpoint (BERTH_API_KEY: the app's write key).",
		required: []string{"app", "endpoint"}, ids: []string{"app", "endpoint"}, enums: map[string][]string{"disabled": {"true", "false"}}},
	{name: "webhook-endpoint-delete", service: "outbound", apiKey: "write", synopsis: "-app ID -endpoint ID",
		about: "Delete a webhook endpoint with its deliveries (BERTH_API_KEY: the app's write key).", required: []string{"app", "endpoint"}, ids: []string{"app", "endpoint"}},
	{name: "webhook-endpoint-rotate", service: "outbound", apiKey: "write", synopsis: "-app ID -endpoint ID",
		about:    "Give a webhook endpoint a new secret, printed this once; the old one signs beside it for 24 hours (BERTH_API_KEY: the app's write key).",
		required: []string{"app", "endpoint"}, ids: []string{"app", "endpoint"}},
	{name: "webhook-deliveries", service: "outbound", apiKey: "write", synopsis: "-app ID -endpoint ID",
		about:    "List a webhook endpoint's newest deliveries with their attempts (BERTH_API_KEY: the app's write key).",
		required: []string{"app", "endpoint"}, ids: []string{"app", "endpoint"}},
	{name: "webhook-delivery-retry", service: "outbound", apiKey: "write", synopsis: "-app ID -endpoint ID -delivery ID",
		about:    "Send a webhook delivery again now, with the same webhook-id (BERTH_API_KEY: the app's write key).",
		required: []string{"app", "endpoint", "delivery"}, ids: []string{"app", "endpoint", "delivery"}},
	{name: "webhook-recover", service: "outbound", apiKey: "write", synopsis: "-app ID -endpoint ID -since RFC3339",
		about:    "Send again every failed delivery of the endpoint since the time (BERTH_API_KEY: the app's write key).",
		required: []string{"app", "endpoint", "since"}, ids: []string{"app", "endpoint"}},

	// A rebuild replays every stored event: minutes on a large deployment.
	{name: "analytics-rebuild", service: "analytics", timeout: time.Hour,
		about: "Empty the read models of routes 6 to 9 and replay every stored event into them (prints the events applied and " +
			"skipped as malformed); lists answered meanwhile are incomplete."},

	{name: "audit-log", service: "analytics", apiKey: "read",
		synopsis: "-app ID -from YYYY-MM-DD -to YYYY-MM-DD [-actor-kind KIND] [-actor ID] [-target-type TYPE] [-target ID] [-action TYPE] [-limit N [-before CURSOR]]",
		about: "List the app's audit log over the days, newest first: who changed what, when, from where, and the names of the " +
			"fields changed (BERTH_API_KEY: the app's read key). With -limit, one page and its next cursor, which -before takes.",
		required: []string{"app", "from", "to"}, ids: []string{"app"},
		enums: map[string][]string{"actor-kind": auditActorKinds, "target-type": auditTargetTypes}},
	{name: "audit-retention", service: "analytics", synopsis: "-app ID", about: "Show how many days the app's audit entries are kept.",
		required: []string{"app"}, ids: []string{"app"}},
	{name: "audit-retention-set", service: "analytics", synopsis: "-app ID -days N",
		about:    "Keep the app's audit entries this many days (1 to 3650); older ones are deleted within the hour.",
		required: []string{"app", "days"}, ids: []string{"app"}},

	{name: "gen-secrets", about: "Print fresh values of the deployment's secrets as export lines (hex), for a new deployment's environment."},
}

// lookup finds a command by name.
func lookup(name string) (command, error) {
	for _, c := range commands {
		if c.name == name {
			return c, nil
		}
	}
	return command{}, usageError{fmt.Errorf("unknown command %q (berthctl help lists them)", name)}
}

// flagName matches the flags a synopsis names.
var flagName = regexp.MustCompile(`(?:^|[\s\[|])-([a-z][a-z-]*)`)

// flags are the names of the flags the command takes, in its synopsis's order, and -o for a
// command that prints a result.
func (c command) flags() []string {
	var names []string
	for _, m := range flagName.FindAllStringSubmatch(c.synopsis, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	if c.service == "" {
		return names
	}
	return append(names, "o")
}

// uuidPattern is a UUID's text form, which every id of Berth's admin APIs has.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// check holds the parsed flags to the command's rules.
func (c command) check(fs *flag.FlagSet) error {
	takes := c.flags()
	var problem error
	fs.Visit(func(f *flag.Flag) {
		if problem == nil && !slices.Contains(takes, f.Name) {
			problem = fmt.Errorf("-%s is not a flag of %s (berthctl help %s)", f.Name, c.name, c.name)
		}
	})
	if problem != nil {
		return problem
	}
	for _, name := range c.required {
		if strings.TrimSpace(fs.Lookup(name).Value.String()) == "" {
			return fmt.Errorf("-%s is required", name)
		}
	}
	for _, name := range c.ids {
		for _, v := range values(fs.Lookup(name).Value) {
			if v != "" && !uuidPattern.MatchString(v) {
				return fmt.Errorf("-%s must be a UUID such as 0b3c6a57-1f0e-4c8e-9a57-3d2f8e4b1c6d, not %q", name, v)
			}
		}
	}
	enums := map[string][]string{}
	if fs.Lookup("o") != nil {
		enums["o"] = []string{"table", "json"}
	}
	maps.Copy(enums, c.enums)
	for _, name := range slices.Sorted(maps.Keys(enums)) {
		if v := fs.Lookup(name).Value.String(); v != "" && !slices.Contains(enums[name], v) {
			return fmt.Errorf("-%s must be %s", name, orList(enums[name]))
		}
	}
	return nil
}

// values are a flag's values: each of a repeatable flag's, else its one.
func values(v flag.Value) []string {
	if m, ok := v.(*multi); ok {
		return *m
	}
	return []string{v.String()}
}

// orList writes values as "a, b or c".
func orList(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// usageError is a command line berthctl cannot run: an unknown command or a bad flag (exit
// status 2, as for flag parsing errors).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// errHelpShown ends a command run with -help: its help was printed, nothing else is done.
var errHelpShown = errors.New("help shown")

// invocation is one run of a command: its flag set (the command's family adds its flags), its
// arguments and where it prints.
type invocation struct {
	cmd  command
	fs   *flag.FlagSet
	args []string
	out  io.Writer
}

// parse parses and checks the invocation's flags: -help prints the command's help (errHelpShown);
// a bad flag is a usageError.
func (inv *invocation) parse() error {
	err := inv.fs.Parse(inv.args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		if err := writeHelp(inv.out, inv.cmd, inv.fs); err != nil {
			return err
		}
		return errHelpShown
	case err != nil:
		return usageError{err}
	case inv.fs.NArg() > 0:
		return usageError{fmt.Errorf("unexpected argument %q", inv.fs.Arg(0))}
	}
	if err := inv.cmd.check(inv.fs); err != nil {
		return usageError{err}
	}
	return nil
}

// writeHelp prints a command's help: its synopsis, what it does and its flags.
func writeHelp(out io.Writer, c command, fs *flag.FlagSet) error {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s\n\n%s\n", strings.TrimSpace("berthctl "+c.name+" "+c.synopsis), wrap(c.about, 96))
	if len(c.flags()) > 0 {
		b.WriteString("\nflags:\n")
	}
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, name := range c.flags() {
		f := fs.Lookup(name)
		def := ""
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			def = " (default " + f.DefValue + ")"
		}
		_, _ = fmt.Fprintf(tw, "  -%s\t%s%s\n", name, f.Usage, def) // a tabwriter reports write errors at Flush
	}
	_ = tw.Flush() // into a strings.Builder, which never fails
	_, err := io.WriteString(out, b.String())
	return err
}

// wrap breaks text into lines of at most width characters.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		if n > 0 && n+1+len(w) > width {
			b.WriteString("\n")
			n = 0
		} else if n > 0 {
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
