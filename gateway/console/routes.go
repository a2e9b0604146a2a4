package console

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/berthhq/berth/gateway/webpage"
)

// templateFiles are the pages' templates: pages.html holds the frame and the first pages, and
// each area of the console may keep its pages in a file of its own.
//
//go:embed *.html
var templateFiles embed.FS

var pages = webpage.Template("console", joined(templateFiles))

// joined is every template file of fsys, in name order, as one text.
func joined(fsys fs.FS) string {
	names, err := fs.Glob(fsys, "*.html")
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	for _, name := range names {
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			panic(err)
		}
		b.Write(text)
		b.WriteByte('\n')
	}
	return b.String()
}

//go:embed static/console.css
var consoleCSS string

//go:embed static/console.js
var consoleJS string

// register mounts every page of the console.
func (c *Console) register() {
	c.handle(http.MethodGet, StylePath, static("text/css; charset=utf-8", ":root{--accent:#2563eb}\n"+webpage.Stylesheet+consoleCSS))
	c.handle(http.MethodGet, ScriptPath, static("text/javascript; charset=utf-8", consoleJS))
	// The hosted pages' passkey script, as a file: the console's policy allows no inline script.
	c.handle(http.MethodGet, PasskeyScriptPath, static("text/javascript; charset=utf-8", webpage.PasskeyScript))
	c.handle(http.MethodGet, SignInPath, c.showSignIn)
	c.handle(http.MethodPost, SignInPath, c.submitSignIn)
	c.handle(http.MethodPost, SecondFactorPath, c.submitSecondFactor)
	c.handle(http.MethodPost, PasskeySignInPath, c.submitPasskey)
	c.handle(http.MethodGet, InvitationPath, c.showInvitation)
	c.handle(http.MethodPost, InvitationPath, c.acceptInvitation)
	c.handle(http.MethodPost, SignOutPath, c.signOut)
	c.handle(http.MethodGet, Path, c.signedIn(c.home))
	c.handle(http.MethodPost, SwitchPath, c.signedIn(c.switchProject))
	c.handle(http.MethodGet, SecurityPath, c.signedIn(c.security))
	c.handle(http.MethodPost, SecurityPath, c.signedIn(c.changeSecurity))
	c.handle(http.MethodGet, MembersPath, c.signedIn(c.members))
	c.handle(http.MethodPost, MembersPath, c.signedIn(c.invite))
	c.handle(http.MethodGet, AppPath, c.signedIn(c.app))
	c.handle(http.MethodPost, AppPath, c.signedIn(c.changeApp))
	c.handle(http.MethodGet, KeysPath, c.signedIn(c.keys))
	c.handle(http.MethodPost, KeysPath, c.signedIn(c.changeKeys))
	c.handle(http.MethodGet, UsersPath, c.signedIn(c.users))
	c.handle(http.MethodGet, UserPath, c.signedIn(c.user))
	c.handle(http.MethodPost, UserPath, c.signedIn(c.changeUser))
	c.registerBilling()
	c.handle(http.MethodGet, TenantsPath, c.signedIn(c.tenants))
	c.handle(http.MethodGet, TenantPath, c.signedIn(c.tenant))
	c.handle(http.MethodPost, TenantPath, c.signedIn(c.changeTenant))
	c.handle(http.MethodGet, AnalyticsPath, c.signedIn(c.analytics))
	c.handle(http.MethodGet, AnalyticsCSVPath, c.signedIn(c.analyticsCSV))
	c.handle(http.MethodGet, EventsPath, c.signedIn(c.events))
	c.handle(http.MethodPost, EventsPath, c.signedIn(c.changeEvents))
	c.handle(http.MethodGet, EndpointPath, c.signedIn(c.endpoint))
	c.handle(http.MethodPost, EndpointPath, c.signedIn(c.changeEndpoint))
	c.handle(http.MethodGet, AuditPath, c.signedIn(c.audit))
	c.handle(http.MethodPost, AuditPath, c.signedIn(c.changeAuditRetention))
}

// static answers an embedded file. It is the same for everyone, so it may be cached for a while
// (the security headers' no-store is for the pages).
func static(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = w.Write([]byte(body))
	}
}
