package console

import (
	"net/http"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// appID is the path's app id, checked: identity decides whether the member may see it.
func appID(r *http.Request) (string, error) {
	return id(map[string][]string{"app": {r.PathValue("app")}}, "app")
}

// readApp reads the app a page names, answering a refusal itself (ok false). Every call after it
// is held to the member's project by its own service as well: reading the app first only names it
// on the page.
func (c *Console) readApp(w http.ResponseWriter, r *http.Request, v visit, appID string) (*identityv1.App, bool) {
	app, err := c.Members.GetApp(v.ctx, &identityv1.GetAppRequest{AppId: appID})
	if err != nil {
		c.fail(w, r, v, err, "read the app")
		return nil, false
	}
	return app, true
}

// pathApp reads the app the path names ({app}): a malformed id is a refused form, and an app the
// member may not see is identity's refusal, each answered here (ok false).
func (c *Console) pathApp(w http.ResponseWriter, r *http.Request, v visit) (*identityv1.App, bool) {
	id, err := appID(r)
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return nil, false
	}
	return c.readApp(w, r, v, id)
}

// app shows an app's settings: origins, branding, policies, identity providers (never their
// secrets), enable and disable, and the signing key's rotation.
func (c *Console) app(w http.ResponseWriter, r *http.Request, v visit) {
	app, ok := c.pathApp(w, r, v)
	if !ok {
		return
	}
	id := app.GetId()
	origins, err := c.Admin.ListAppOrigins(v.ctx, &identityv1.ListAppOriginsRequest{AppId: id})
	if err != nil {
		c.fail(w, r, v, err, "list the app's origins")
		return
	}
	providers, err := c.Admin.ListAppIdentityProviders(v.ctx, &identityv1.ListAppIdentityProvidersRequest{AppId: id})
	if err != nil {
		c.fail(w, r, v, err, "list the app's identity providers")
		return
	}
	editing := &identityv1.IdentityProvider{}
	for _, p := range providers.GetItems() {
		if p.GetSlot() == r.URL.Query().Get("edit") {
			editing = p
		}
	}
	c.render(w, r, http.StatusOK, "app", appView{frame: c.frame(w, r, v.p, v.member, "console.app.title"),
		App: app, Origins: origins, Providers: providers.GetItems(), Editing: editing})
}

// changeApp applies one posted change of the app page through identity's admin API.
func (c *Console) changeApp(w http.ResponseWriter, r *http.Request, v visit) {
	id, in, ok := posted(c, w, r, &v, appID, appFrom)
	if !ok {
		return
	}
	var err error
	notice := "saved"
	switch in.Action {
	case appEnable, appDisable:
		_, err = c.Admin.SetAppEnabled(v.ctx, &identityv1.SetAppEnabledRequest{AppId: id, Enabled: in.Action == appEnable})
	case appRotate:
		_, err = c.Admin.RotateAppKey(v.ctx, &identityv1.RotateAppKeyRequest{AppId: id})
		notice = "rotated"
	case appAddOrigin:
		_, err = c.Admin.AddAppOrigin(v.ctx, &identityv1.AppOriginRequest{AppId: id, Origin: in.Origin})
	case appRemoveOrigin:
		_, err = c.Admin.RemoveAppOrigin(v.ctx, &identityv1.AppOriginRequest{AppId: id, Origin: in.Origin})
	case appBranding:
		_, err = c.Admin.SetAppBranding(v.ctx, &identityv1.SetAppBrandingRequest{AppId: id, Branding: &identityv1.AppBranding{
			DisplayName: in.DisplayName, AccentColor: in.Accent, LogoUrl: in.LogoURL, DefaultLanguage: in.Language,
		}})
	case appVerification:
		_, err = c.Admin.SetAppEmailVerification(v.ctx, &identityv1.SetAppEmailVerificationRequest{AppId: id, Policy: in.Policy})
	case appMFA:
		_, err = c.Admin.SetAppMfa(v.ctx, &identityv1.SetAppMfaRequest{AppId: id, Policy: in.Policy})
	case appPasskeys:
		_, err = c.Admin.SetAppPasskeySignIn(v.ctx, &identityv1.SetAppPasskeySignInRequest{AppId: id, Enabled: in.Enabled})
	case appClearIDP:
		_, err = c.Admin.ClearAppIdentityProvider(v.ctx, &identityv1.ClearAppIdentityProviderRequest{AppId: id, Slot: in.Slot})
	case appRedirects:
		_, err = c.Admin.SetAppRedirectUris(v.ctx, &identityv1.SetAppRedirectUrisRequest{AppId: id, RedirectUris: in.RedirectURIs})
	case appLifetimes:
		_, err = c.Admin.SetAppTokenLifetimes(v.ctx, &identityv1.SetAppTokenLifetimesRequest{AppId: id,
			AccessTokenTtlSeconds: in.AccessTTL, RefreshTokenTtlSeconds: in.RefreshTTL})
	case appSetIDP:
		_, err = c.Admin.SetAppIdentityProvider(v.ctx, &identityv1.SetAppIdentityProviderRequest{AppId: id,
			Provider: in.IDP.Provider, ClientSecret: in.IDP.ClientSecret})
	}
	if err != nil {
		c.fail(w, r, v, err, "change the app ("+in.Action+")")
		return
	}
	back(w, r, Path+"/apps/"+id, notice)
}

// keys lists an app's API keys (never their secrets).
func (c *Console) keys(w http.ResponseWriter, r *http.Request, v visit) {
	c.showKeys(w, r, v, nil)
}

// showKeys renders the keys page, with created's secret when a key was just made.
func (c *Console) showKeys(w http.ResponseWriter, r *http.Request, v visit, created *identityv1.CreatedApiKey) {
	app, ok := c.pathApp(w, r, v)
	if !ok {
		return
	}
	id := app.GetId()
	keys, err := c.Members.ListAppApiKeys(v.ctx, &identityv1.GetAppRequest{AppId: id})
	if err != nil {
		c.fail(w, r, v, err, "list the app's API keys")
		return
	}
	c.render(w, r, http.StatusOK, "keys", keysView{frame: c.frame(w, r, v.p, v.member, "console.keys.title"),
		App: app, Keys: keys.GetItems(), Created: created})
}

// changeKeys creates (its secret shown once, on this answer only), renames or revokes an API key.
func (c *Console) changeKeys(w http.ResponseWriter, r *http.Request, v visit) {
	id, in, ok := posted(c, w, r, &v, appID, keyFrom)
	if !ok {
		return
	}
	var err error
	notice := "renamed"
	switch in.Action {
	case keyCreate:
		created, err := c.Admin.CreateApiKey(v.ctx, &identityv1.CreateApiKeyRequest{AppId: id, Type: in.Type, Name: in.Name, Description: in.Description})
		if err != nil {
			c.fail(w, r, v, err, "create an API key")
			return
		}
		c.showKeys(w, r, v, created)
		return
	case keyRename:
		_, err = c.Operator.UpdateApiKey(v.ctx, &identityv1.UpdateApiKeyRequest{
			ProjectUuid: v.member.GetProjectId(), AppUuid: id, ApiKeyUuid: in.KeyID, Name: &in.Name, Description: &in.Description,
		})
	case keyRevoke:
		_, err = c.Members.RevokeApiKey(v.ctx, &identityv1.RevokeApiKeyRequest{AppId: id, KeyId: in.KeyID})
		notice = "revoked"
	}
	if err != nil {
		c.fail(w, r, v, err, "change an API key ("+in.Action+")")
		return
	}
	back(w, r, Path+"/apps/"+id+"/keys", notice)
}
