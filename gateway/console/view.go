package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/reqid"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// frame is what every console page shows around its content: the head, the navigation of a
// signed-in member, the CSRF token of its forms and a notice of a finished change.
type frame struct {
	locale.Printer
	Title     string // a catalog key
	CSRF      string
	Member    *identityv1.MemberProfile // nil on the pages before the sign-in
	Notice    string                    // a catalog key, "" for none
	RequestID string
	here      url.URL // the page's own link, for the language links
}

// notices are the changes a page may report after its redirect (the link's notice parameter),
// each a catalog key: the link is anyone's to edit, so only these are shown.
var notices = map[string]string{
	"ended": "console.notice.ended", "signedOut": "console.notice.signedOut",
	"invited": "console.notice.invited", "saved": "console.notice.saved", "renamed": "console.notice.renamed",
	"revoked": "console.notice.revoked", "rotated": "console.notice.rotated",
	"passkeyAdded": "console.notice.passkeyAdded", "passkeyRemoved": "console.notice.passkeyRemoved",
	"totpRemoved": "console.notice.totpRemoved",
	userFreeze:    "console.notice.frozen", userUnfreeze: "console.notice.unfrozen", userRevokeSessions: "console.notice.sessionsRevoked",
	userSendReset: "console.notice.resetSent", userResendVerification: "console.notice.verificationSent",
	userResetFactors: "console.notice.factorsReset", userDelete: "console.notice.userDeleted",
	"promotionCreated": "console.notice.promotionCreated", "activated": "console.notice.activated",
	"deactivated":  "console.notice.deactivated",
	"tenantFrozen": "console.notice.tenantFrozen", "tenantUnfrozen": "console.notice.tenantUnfrozen",
	"deleted": "console.notice.deleted", "retried": "console.notice.retried", "recovered": "console.notice.recovered",
	"replayed": "console.notice.replayed", "retentionSaved": "console.notice.retentionSaved",
}

func (c *Console) frame(w http.ResponseWriter, r *http.Request, p locale.Printer, m *identityv1.MemberProfile, title string) frame {
	return frame{Printer: p, Title: title, CSRF: csrf.Issue(w, r), Member: m,
		Notice: notices[r.URL.Query().Get("notice")], RequestID: reqid.From(r.Context()), here: here(r, m != nil)}
}

// here is the link that shows r's page again: a GET's own path and query (an invitation keeps its
// token), else, after a POST, the home page or the sign-in page.
func here(r *http.Request, signedIn bool) url.URL {
	switch {
	case r.Method == http.MethodGet:
		return url.URL{Path: r.URL.Path, RawQuery: r.URL.RawQuery}
	case signedIn:
		return url.URL{Path: Path}
	}
	return url.URL{Path: SignInPath}
}

// LanguageURL is the page's link in lang; a notice is not repeated.
func (f frame) LanguageURL(lang string) string {
	q := f.here.Query()
	q.Del("notice")
	q.Del("lng")
	q.Set("language", lang)
	u := f.here
	u.RawQuery = q.Encode()
	return u.String()
}

// Head is the layout's view of the page: the console's stylesheet file, no app branding.
func (f frame) Head() webpage.Head {
	return webpage.Head{Title: f.T(f.Title), Stylesheet: StylePath, Printer: f.Printer}
}

// Project is the name of the member's current project.
func (f frame) Project() string {
	for _, p := range f.Member.GetProjects() {
		if p.GetId() == f.Member.GetProjectId() {
			return p.GetName()
		}
	}
	return f.Member.GetProjectId()
}

// When shows an RFC 3339 time in UTC to the minute; anything else as it is.
func (frame) When(rfc3339 string) string {
	t, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		return rfc3339
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// The paths of an app's pages, for links and form actions.
func (frame) AppURL(appID string) string  { return Path + "/apps/" + appID }
func (frame) KeysURL(appID string) string { return Path + "/apps/" + appID + "/keys" }

// The paths of an app's tenants and of one tenant.
func (frame) TenantsURL(appID string) string { return Path + "/apps/" + appID + "/tenants" }

func (frame) TenantURL(appID, tenantID string) string {
	return Path + "/apps/" + appID + "/tenants/" + tenantID
}

// Paths the templates link to.
func (frame) Paths() map[string]string {
	return map[string]string{
		"home": Path, "signIn": SignInPath, "secondFactor": SecondFactorPath, "signOut": SignOutPath,
		"invitation": InvitationPath, "switch": SwitchPath, "security": SecurityPath, "members": MembersPath,
		"script": ScriptPath, "passkeySignIn": PasskeySignInPath, "passkeyScript": PasskeyScriptPath,
	}
}

// problemView is a refusal or failure: its message and the field it is about.
type problemView struct {
	frame
	Message string // a catalog key
	Field   string
}

// signInView is the sign-in form, or its second-factor step when Challenge is set.
type signInView struct {
	frame
	Email     string
	Challenge string
	Message   string // a catalog key
	// Passkey is the second step's passkey ceremony (Options "" when the account holds none).
	Passkey webpage.Passkey
}

// invitationView is the invitation's acceptance form.
type invitationView struct {
	frame
	Token      string
	Invitation *identityv1.Invitation
	Message    string
}

// homeView is the member's project with its apps.
type homeView struct {
	frame
	Apps []*identityv1.App
}

// securityView is the member's second factor: its state, an enrolment in progress (Key) or the
// recovery codes an enrolment answered (Codes, shown once).
type securityView struct {
	frame
	Key   *webpage.TOTPKey
	Codes *webpage.RecoveryCodes
	// Factors are the account's second factors; Passkey the ceremony of adding a passkey (Options
	// "" when passkeys cannot be added: a deployment without a public URL, or no member account).
	Factors []*identityv1.MemberFactor
	Passkey webpage.Passkey
}

// HasTOTP reports whether the account's factors hold its TOTP factor.
func (v securityView) HasTOTP() bool {
	for _, f := range v.Factors {
		if f.GetKind() == "totp" {
			return true
		}
	}
	return false
}

// Passkeys are the account's passkeys.
func (v securityView) Passkeys() []*identityv1.MemberFactor {
	var out []*identityv1.MemberFactor
	for _, f := range v.Factors {
		if f.GetKind() == "passkey" {
			out = append(out, f)
		}
	}
	return out
}

// membersView is the project's member list and the invitation form.
type membersView struct {
	frame
	Members []*identityv1.ProjectMemberItem
}

// appView is an app's settings.
type appView struct {
	frame
	App       *identityv1.App
	Origins   *identityv1.AppOrigins
	Providers []*identityv1.IdentityProvider
	// Editing is the configured slot the provider form starts from (the link's edit parameter),
	// an empty provider for a new one.
	Editing *identityv1.IdentityProvider
}

// Joined shows a list field of the provider form as the member typed it.
func (frame) Joined(entries []string) string { return strings.Join(entries, " ") }

// keysView is an app's API keys, with the secret of one just created (shown once).
type keysView struct {
	frame
	App     *identityv1.App
	Keys    []*identityv1.ApiKey
	Created *identityv1.CreatedApiKey
}

// Slots are the identity-provider slots an app has, in order.
func (frame) Slots() []string { return []string{"idpA", "idpB", "idpC", "idpD"} }

// Choices are the values of an app policy, in the order the page offers them.
func (frame) Choices(policy string) []string {
	if policy == "mfa" {
		return []string{"off", "optional", "required"}
	}
	return []string{"required", "optional"}
}
