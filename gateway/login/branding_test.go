package login

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/berthhq/berth/gateway/webpage"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestABrandedAppsPageShowsItsNameColourAndLogoAndAllowsOnlyThatImage(t *testing.T) {
	fake := newFake()
	fake.branding = &identityv1.AppBranding{DisplayName: "Schön & <Co>", AccentColor: "#0a7f3e", LogoUrl: "https://cdn.example.test/brand/logo.png?v=2"}
	rec := get(t, newPageOnly(fake), linkQuery("signIn"))
	body := wantPage(t, rec, http.StatusOK)
	for _, want := range []string{
		":root{--accent:#0a7f3e}",
		`<header class="brand"><img src="https://cdn.example.test/brand/logo.png?v=2" alt="Schön &amp; &lt;Co&gt; logo"><span>Schön &amp; &lt;Co&gt;</span></header>`,
		"to continue to Schön &amp; &lt;Co&gt;",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "; img-src https://cdn.example.test;") || !strings.HasPrefix(csp, "default-src 'none';") {
		t.Errorf("Content-Security-Policy = %q, want the logo's origin as the only image source", csp)
	}
}

func TestAnUnbrandedPageHasTheNeutralLookAndNoImageSource(t *testing.T) {
	rec := get(t, newPageOnly(newFake()), linkQuery("signIn"))
	body := wantPage(t, rec, http.StatusOK)
	if !strings.Contains(body, ":root{--accent:#2563eb}") || strings.Contains(body, `class="brand"`) || !strings.Contains(body, "to continue to Demo App") {
		t.Errorf("not the neutral look:\n%s", body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); strings.Contains(csp, "img-src") {
		t.Errorf("Content-Security-Policy = %q allows images", csp)
	}
}

// Identity validates branding when it is set; the page holds the shapes again, because an accent
// lands in a stylesheet and a logo's origin in a header. Whatever fails is dropped, never written.
func TestBrandingThatSlipsPastIdentityIsDroppedNotWritten(t *testing.T) {
	for _, tc := range []struct {
		name   string
		accent string
		logo   string
	}{
		{"CSS injected through the accent", "#000000}body{display:none", ""},
		{"a named colour", "red", ""},
		{"a plain http logo", "", "http://cdn.example.test/logo.png"},
		{"a javascript logo", "", "javascript:alert(1)"},
		{"a data logo", "", "data:image/svg+xml,<svg onload=alert(1)>"},
		{"a logo host that would inject a directive", "", "https://cdn.example.test;script-src 'unsafe-inline'/l.png"},
		{"an overlong logo", "", "https://cdn.example.test/" + strings.Repeat("a", 3000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			fake.branding = &identityv1.AppBranding{AccentColor: tc.accent, LogoUrl: tc.logo}
			rec := get(t, newPageOnly(fake), linkQuery("signIn"))
			body := wantPage(t, rec, http.StatusOK)
			if !strings.Contains(body, ":root{--accent:#2563eb}") || strings.Contains(body, "display:none") || strings.Contains(body, "<img") {
				t.Errorf("the page took the bad branding:\n%s", body)
			}
			if csp := rec.Header().Get("Content-Security-Policy"); strings.Contains(csp, "img-src") || strings.Contains(csp, "unsafe-inline'/") {
				t.Errorf("Content-Security-Policy = %q", csp)
			}
		})
	}
}

// A logo URL is an attribute value: quotes in it cannot open a new attribute.
func TestALogoURLCannotBreakOutOfItsAttribute(t *testing.T) {
	fake := newFake()
	fake.branding = &identityv1.AppBranding{LogoUrl: `https://cdn.example.test/l.png?"onerror="alert(1)`}
	body := wantPage(t, get(t, newPageOnly(fake), linkQuery("signIn")), http.StatusOK)
	if strings.Contains(body, `"onerror=`) || strings.Contains(body, ` onerror=`) {
		t.Errorf("the logo URL broke out of src:\n%s", body)
	}
}

// The pages a verification mail's link opens name no app in their URL; identity names it through
// the link's verification, so they wear the app's look like the sign-in page, and the page that
// ends a verification too (by link or by the code form).
func TestTheVerificationLinksPagesWearTheAppsBranding(t *testing.T) {
	const logo = "https://cdn.example.test/brand/logo.png"
	branded := &identityv1.AppBranding{DisplayName: "Shop", AccentColor: "#0a7f3e", LogoUrl: logo, DefaultLanguage: "de"}
	wantBranded := func(t *testing.T, what string, rec *httptest.ResponseRecorder) {
		t.Helper()
		body := rec.Body.String()
		for _, want := range []string{":root{--accent:#0a7f3e}", `<img src="` + logo + `"`, "<span>Shop</span>", `<html lang="de">`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q:\n%s", what, want, body)
			}
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "img-src https://cdn.example.test") {
			t.Errorf("%s: Content-Security-Policy = %q, want the logo's origin", what, csp)
		}
	}
	fake := newFake()
	fake.branding = branded
	p, _ := newPage(fake)
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, VerifyPath+"?token=s3cret", nil))
	wantBranded(t, "the confirm page", rec)
	wantBranded(t, "the confirmed page", postTo(t, p, VerifyPath, url.Values{"op": {opLink}, "token": {"s3cret"}}, webpage.NewToken()))
	wantBranded(t, "the page after a code", postTo(t, p, VerifyPath, pendingForm(opCode), webpage.NewToken()))
}

func TestAVerificationLinkOfAnUnbrandedAppOrOfNoKnownAppHasTheNeutralLook(t *testing.T) {
	for _, token := range []string{"s3cret", "unknown"} {
		p, _ := newPage(newFake())
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, VerifyPath+"?token="+token, nil))
		body := wantPage(t, rec, http.StatusOK)
		if !strings.Contains(body, ":root{--accent:#2563eb}") || strings.Contains(body, `class="brand"`) {
			t.Errorf("link %s: not the neutral look:\n%s", token, body)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); strings.Contains(csp, "img-src") {
			t.Errorf("link %s: Content-Security-Policy = %q allows images", token, csp)
		}
	}
}
