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
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
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
			p := New(f, f, slog.New(slog.DiscardHandler))
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
func TestPaymentCardsOfAnUnbrandedOrUnknownAppHaveTheNeutralLookAndAllowNoImage(t *testing.T) {
	for name, target := range map[string]string{
		"unbranded app":     link(nil),
		"unknown app":       link(map[string]string{"client_id": "11111111-59a2-4c4e-9a39-2f3a1b2c3d4e"}),
		"return, no cookie": ReturnPath + "?session_id=" + sessionID,
	} {
		f := &fakeBilling{openErr: status.Error(codes.Unavailable, "x"), returnErr: status.Error(codes.Unavailable, "x")}
		pages := New(f, f, slog.New(slog.DiscardHandler))
		h := pages.Open
		if strings.HasPrefix(target, ReturnPath) {
			h = pages.Return
		}
		res := serve(h, target)
		body, _ := io.ReadAll(res.Body)
		if !strings.Contains(string(body), ":root{--accent:#2563eb}") || strings.Contains(string(body), "<img") || strings.Contains(string(body), `class="brand"`) {
			t.Errorf("%s: not the neutral look:\n%s", name, body)
		}
		if csp := res.Header.Get("Content-Security-Policy"); strings.Contains(csp, "img-src") {
			t.Errorf("%s: Content-Security-Policy = %q", name, csp)
		}
	}
}

// The payment link names its app, and the state cookie carries it to the return page: both cards
// show the app's name, accent and logo, in its default language, and allow only that image.
func TestPaymentCardsOfABrandedAppWearItsNameColourAndLogo(t *testing.T) {
	const logo = "https://cdn.example.test/logo.png"
	f := &fakeBilling{
		openErr: status.Error(codes.FailedPrecondition, "finished"), returnErr: status.Error(codes.FailedPrecondition, "finished"),
		branding: &identityv1.AppBranding{DisplayName: "Shop", AccentColor: "#0a7f3e", LogoUrl: logo, DefaultLanguage: "de"},
	}
	pages := New(f, f, slog.New(slog.DiscardHandler))
	cookie := &http.Cookie{Name: stateCookie, Value: sessionID + "." + state + "." + appID}
	for name, res := range map[string]*http.Response{
		"payment page": serve(pages.Open, link(nil)),
		"return page":  serve(pages.Return, ReturnPath+"?session_id="+sessionID, cookie),
	} {
		body, _ := io.ReadAll(res.Body)
		for _, want := range []string{":root{--accent:#0a7f3e}", `<img src="` + logo + `"`, "<span>Shop</span>", `<html lang="de">`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("%s lacks %q:\n%s", name, want, body)
			}
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src https://cdn.example.test") {
			t.Errorf("%s: Content-Security-Policy = %q, want the logo's origin", name, csp)
		}
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
