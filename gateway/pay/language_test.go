package pay

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/locale"
)

func TestPaymentPagesSpeakGermanWhenTheLinkOrTheBrowserAsks(t *testing.T) {
	for _, tc := range []struct {
		name, query, accept string
	}{
		{"language=de", "&language=de", ""},
		{"lng=de", "&lng=de", "en"},
		{"a Swiss browser", "", "de-CH, en;q=0.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeBilling{openErr: status.Error(codes.FailedPrecondition, "x"), returnErr: status.Error(codes.NotFound, "x")}
			p := New(f, slog.New(slog.DiscardHandler))
			for target, want := range map[string]string{
				link(nil) + tc.query: "Dieser Bezahlvorgang ist bereits abgeschlossen.",
				ReturnPath + "?session_id=" + sessionID + tc.query: "Dieser Zahlungslink ist ungültig.",
			} {
				req := httptest.NewRequest(http.MethodGet, target, nil)
				req.Header.Set("Accept-Language", tc.accept)
				rec := httptest.NewRecorder()
				if strings.HasPrefix(target, ReturnPath) {
					p.Return(rec, req)
				} else {
					p.Open(rec, req)
				}
				body, _ := io.ReadAll(rec.Result().Body)
				for _, w := range []string{`<html lang="de">`, "<h1>Zahlung</h1>", want} {
					if !strings.Contains(string(body), w) {
						t.Errorf("%s lacks %q:\n%s", target, w, body)
					}
				}
			}
		})
	}
}

// The card keeps the neutral look: billing knows no branding, and a card mostly answers a link
// nobody vouched for. So its policy allows no image.
func TestPaymentCardsKeepTheNeutralLookAndAllowNoImage(t *testing.T) {
	f := &fakeBilling{openErr: status.Error(codes.Unavailable, "x")}
	res := serve(New(f, slog.New(slog.DiscardHandler)).Open, link(nil))
	body, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(body), ":root{--accent:#2563eb}") || strings.Contains(string(body), "<img") {
		t.Errorf("not the neutral look:\n%s", body)
	}
	if csp := res.Header.Get("Content-Security-Policy"); strings.Contains(csp, "img-src") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
}

func TestThePaymentCardUsesOnlyMessagesOfTheCatalog(t *testing.T) {
	for _, tmpl := range page.Templates() {
		if unknown := locale.UnknownKeys(tmpl.Tree); len(unknown) > 0 {
			t.Errorf("template %q uses keys the catalog lacks: %q", tmpl.Name(), unknown)
		}
	}
	for _, key := range []string{msgBadLink, msgFinished, msgInternal, msgUnavailable} {
		if !locale.Has(key) {
			t.Errorf("%q is not in the catalog", key)
		}
	}
}
