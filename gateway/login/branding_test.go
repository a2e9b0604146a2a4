package login

import (
	"net/http"
	"strings"
	"testing"

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
