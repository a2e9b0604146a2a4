package events_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/events"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

func TestCatalogHoldsTheDeclaredEvents(t *testing.T) {
	if got := events.Payload(identityv1.EventUserFrozen).FullName(); got != "berth.identity.v1.UserChanged" {
		t.Errorf("payload of %s = %s", identityv1.EventUserFrozen, got)
	}
	if got := events.Payload(tenantv1.EventTenantCreated).FullName(); got != "berth.tenant.v1.TenantChanged" {
		t.Errorf("payload of %s = %s", tenantv1.EventTenantCreated, got)
	}
	if md := events.Payload("shipping.parcel.sent"); md != nil {
		t.Errorf("undeclared type has payload %s", md.FullName())
	}
	if types := events.Types(); !slices.IsSorted(types) || !slices.Contains(types, identityv1.EventUserSignedIn) {
		t.Errorf("types = %v, want them sorted, user.signed_in among them", types)
	}
}

// TestCatalogHoldsEveryContextWithGeneratedEvents compares the catalog with what make proto wrote:
// every context for which genevents generated event constants (proto/<context>/v1/events.berth.go)
// declares events, and has its stream; no other does. A context missing from proto/registry has
// no place in the catalog, so no process would create its stream.
func TestCatalogHoldsEveryContextWithGeneratedEvents(t *testing.T) {
	generated, err := filepath.Glob("../../proto/*/*/events.berth.go")
	if err != nil || len(generated) == 0 {
		t.Fatalf("no generated event constants under proto/ (%v)", err)
	}
	var contexts, streams []string
	for _, g := range generated {
		context := filepath.Base(filepath.Dir(filepath.Dir(g)))
		contexts = append(contexts, context)
		streams = append(streams, "BERTH_"+strings.ToUpper(context))
	}
	slices.Sort(contexts)
	slices.Sort(streams)
	if got := events.Contexts(); !slices.Equal(got, contexts) {
		t.Errorf("contexts = %v, want the ones with generated event constants, %v", got, contexts)
	}
	if got := (events.Bus{}).Streams(); !slices.Equal(got, streams) {
		t.Errorf("streams = %v, want %v", got, streams)
	}
}

// TestTheEventsPageTableMatchesTheCatalog keeps the catalog table of docs/events.md true: every
// declared type with its payload message, and nothing else.
func TestTheEventsPageTableMatchesTheCatalog(t *testing.T) {
	page, err := os.ReadFile(eventsPage)
	if err != nil {
		t.Fatal(err)
	}
	table := eventsTable(t, string(page))
	want := map[string]string{}
	for _, typ := range events.Types() {
		want[events.Bus{}.Subject(typ)] = string(events.Payload(typ).FullName())
	}
	if maps.Equal(table, want) {
		return
	}
	for _, subject := range slices.Sorted(maps.Keys(want)) {
		if got, ok := table[subject]; !ok {
			t.Errorf("%s lacks the row `%s` | `%s`", eventsPage, subject, want[subject])
		} else if got != want[subject] {
			t.Errorf("%s gives `%s` the payload `%s`, the declaration `%s`", eventsPage, subject, got, want[subject])
		}
	}
	for _, subject := range slices.Sorted(maps.Keys(table)) {
		if _, ok := want[subject]; !ok {
			t.Errorf("%s lists `%s`, which no payload message declares", eventsPage, subject)
		}
	}
}

// eventsPage is the documentation page that holds the event catalog.
const eventsPage = "../../docs/events.md"

// eventsTable returns the subject → payload rows of the table in the page's "## Catalog" section,
// one subject per row, cells in backquotes.
func eventsTable(t *testing.T, page string) map[string]string {
	t.Helper()
	_, section, ok := strings.Cut(page, "\n## Catalog\n")
	if !ok {
		t.Fatalf(`%s has no "## Catalog" section`, eventsPage)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]string{}
	for line := range strings.Lines(section) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("Events row %q has %d cells, want subject | payload | when", line, len(cells))
		}
		subject, payload := strings.Trim(cells[0], " `"), strings.Trim(cells[1], " `")
		if subject == "subject" || strings.Trim(subject, "-") == "" { // header and its underline
			continue
		}
		if _, dup := rows[subject]; dup {
			t.Fatalf("Events table lists %s twice", subject)
		}
		rows[subject] = payload
	}
	if len(rows) == 0 {
		t.Fatalf("the Catalog section of %s has no table rows", eventsPage)
	}
	return rows
}
