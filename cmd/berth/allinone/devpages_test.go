package allinone

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/module"
)

func TestTheDevelopmentPagesAnswerBeforeAndAfterTheSeed(t *testing.T) {
	var board demoBoard
	site, err := devPages("http://berth.test", mail.NewMailbox(slog.New(slog.DiscardHandler)), &Example{}, &board).Web(context.Background(), module.Common{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	site.Register(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "edge", http.StatusTeapot) }) // the edge's catch-all
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}
	demo := seed.Demo{BaseURL: "http://berth.test", AppID: "app-1", ReadKey: "read-1", TenantID: "tenant-1", State: seed.DemoState, RedirectURI: "http://berth.test" + DevCallbackPath}

	for _, c := range []struct {
		name, path string
		seeded     bool
		status     int
		contains   string // in the body, or the Location of a redirect
	}{
		{"the landing page while seeding", "/", false, http.StatusOK, "being seeded"},
		{"the landing page lists the demo", "/", true, http.StatusOK, "read-1"},
		{"only / itself is the landing page", "/anything", true, http.StatusTeapot, "edge"},
		{"sign-up before the seed goes to the landing page", DevSignUpPath, false, http.StatusSeeOther, "/"},
		{"sign-up forwards to the hosted page with the state", DevSignUpPath, true, http.StatusSeeOther, "state=" + seed.DemoState},
		{"a payment of no demo app", DevPaidPath + "?client_id=other&status=completed", true, http.StatusNotFound, "demo apps only"},
		{"a payment before the seed", DevPaidPath + "?client_id=app-1", false, http.StatusNotFound, "demo apps only"},
		{"the callback shows the code", DevCallbackPath + "?code=c0de&state=s", true, http.StatusOK, "c0de"},
		{"the mailbox in the same layout", DevMailboxPath, true, http.StatusOK, "No messages yet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			board.Store(nil)
			if c.seeded {
				board.Store(&demo)
			}
			rec := get(c.path)
			got := rec.Body.String()
			if rec.Code == http.StatusSeeOther {
				got = rec.Header().Get("Location")
			}
			if rec.Code != c.status || !strings.Contains(got, c.contains) {
				t.Fatalf("GET %s: %d %q, want %d with %q", c.path, rec.Code, got, c.status, c.contains)
			}
			if rec.Code != http.StatusTeapot && rec.Code != http.StatusSeeOther && !strings.Contains(got, `<meta name="viewport"`) {
				t.Errorf("GET %s: the page has no viewport", c.path)
			}
		})
	}
}
