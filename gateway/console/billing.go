package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// The billing pages' paths: the app's billing (connections, catalog, promotions, referral
// reward) and one promotion (its limits, its state and its redemptions).
const (
	BillingPath   = Path + "/apps/{app}/billing"
	PromotionPath = Path + "/apps/{app}/billing/promotions/{promotion}"
)

// BillingURL and PromotionURL are the billing pages' links, for templates and redirects.
func (frame) BillingURL(appID string) string { return Path + "/apps/" + appID + "/billing" }
func (f frame) PromotionURL(appID, promotionID string) string {
	return f.BillingURL(appID) + "/promotions/" + promotionID
}

// registerBilling mounts the billing pages.
func (c *Console) registerBilling() {
	c.handle(http.MethodGet, BillingPath, c.signedIn(c.billing))
	c.handle(http.MethodPost, BillingPath, c.signedIn(c.changeBilling))
	c.handle(http.MethodGet, PromotionPath, c.signedIn(c.promotion))
	c.handle(http.MethodPost, PromotionPath, c.signedIn(c.changePromotion))
}

// billingView is an app's billing: its provider connections (never their secrets), settings,
// catalog and promotions.
type billingView struct {
	frame
	App        *identityv1.App
	Billing    *billingv1.AppBilling
	Catalog    *billingv1.Catalog
	Promotions []*billingv1.Promotion
}

// promotionView is one promotion with a page of its redemptions, newest first; Next continues
// after the page ("" on the last), Paged says the page is not the first.
type promotionView struct {
	frame
	App         *identityv1.App
	Promotion   *billingv1.Promotion
	Redemptions []*billingv1.PromotionRedemption
	Next        string
	Paged       bool
}

// billing shows the app's connections, settings, catalog and promotions.
func (c *Console) billing(w http.ResponseWriter, r *http.Request, v visit) {
	app, ok := c.pathApp(w, r, v)
	if !ok {
		return
	}
	ref := &billingv1.GetAppBillingRequest{AppId: app.GetId()}
	b, err := c.Billing.GetAppBilling(v.ctx, ref)
	if err != nil {
		c.fail(w, r, v, err, "read the app's billing")
		return
	}
	catalog, err := c.Billing.ListCatalog(v.ctx, &billingv1.ListCatalogRequest{AppId: app.GetId()})
	if err != nil {
		c.fail(w, r, v, err, "list the app's catalog")
		return
	}
	promotions, err := c.Billing.ListAppPromotions(v.ctx, &billingv1.ListPromotionsRequest{AppId: app.GetId()})
	if err != nil {
		c.fail(w, r, v, err, "list the app's promotions")
		return
	}
	c.render(w, r, http.StatusOK, "billing", billingView{frame: c.frame(w, r, v.p, v.member, "console.billing.title"),
		App: app, Billing: b, Catalog: catalog, Promotions: promotions.GetItems()})
}

// changeBilling applies one posted change of the billing page. A new promotion opens its own
// page; the other changes come back to the billing page.
func (c *Console) changeBilling(w http.ResponseWriter, r *http.Request, v visit) {
	id, in, ok := posted(c, w, r, &v, appID, billingFrom)
	if !ok {
		return
	}
	var err error
	target, notice := Path+"/apps/"+id+"/billing", "saved"
	switch in.Action {
	case billingReferral:
		_, err = c.Billing.UpdateAppSettings(v.ctx, &billingv1.UpdateAppSettingsRequest{AppId: id, ReferralPromotionId: &in.ReferralPromotion})
	case billingSettings:
		s := in.Settings
		_, err = c.Billing.UpdateAppSettings(v.ctx, &billingv1.UpdateAppSettingsRequest{AppId: id, ConnectionId: &s.ConnectionID,
			PaymentReturnUrl: &s.PaymentReturnURL, FailedPaymentsToFreeze: &s.FailedPaymentsToFreeze,
			OneTimePaymentValidDays: &s.OneTimeValidDays, RenewalLineDescription: &s.RenewalLine})
	case billingPrice:
		p := in.Price
		_, err = c.Billing.CreateCatalogPrice(v.ctx, &billingv1.CreateCatalogPriceRequest{AppId: id, ProductName: p.ProductName,
			Amount: p.Amount, Currency: p.Currency, Interval: p.Interval})
	case billingTaxRate:
		t := in.TaxRate
		_, err = c.Billing.CreateCatalogTaxRate(v.ctx, &billingv1.CreateCatalogTaxRateRequest{AppId: id, DisplayName: t.DisplayName,
			BasisPoints: t.BasisPoints, Inclusive: t.Inclusive})
	case billingPromotion:
		p := in.Promotion
		var created *billingv1.Promotion
		created, err = c.Billing.CreatePromotion(v.ctx, &billingv1.CreatePromotionRequest{AppId: id, Code: p.Code, Name: p.Name,
			Description: p.Description, FreeUnits: p.FreeUnits, FreeDays: p.FreeDays, ValidFrom: p.ValidFrom,
			ValidUntil: p.ValidUntil, MaxRedemptions: p.MaxRedemptions})
		target, notice = frame{}.PromotionURL(id, created.GetId()), "promotionCreated"
	}
	if err != nil {
		c.fail(w, r, v, err, "change the app's billing ("+in.Action+")")
		return
	}
	back(w, r, target, notice)
}

// promotion shows one promotion of the app with a page of its redemptions.
func (c *Console) promotion(w http.ResponseWriter, r *http.Request, v visit) {
	app, ok := c.pathApp(w, r, v)
	if !ok {
		return
	}
	promotionID, err := promotionID(url.Values{"promotion": {r.PathValue("promotion")}})
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return
	}
	cursor, err := redemptionsCursor(r.URL.Query())
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return
	}
	// Billing lists a promotion only among its app's: the list is where one is found.
	all, err := c.Billing.ListAppPromotions(v.ctx, &billingv1.ListPromotionsRequest{AppId: app.GetId()})
	if err != nil {
		c.fail(w, r, v, err, "list the app's promotions")
		return
	}
	var promotion *billingv1.Promotion
	for _, p := range all.GetItems() {
		if p.GetId() == promotionID {
			promotion = p
		}
	}
	if promotion == nil {
		c.refuse(w, r, v.p, &v, failure{status: http.StatusNotFound, message: msgNotFound}, "no promotion "+promotionID+" of the app")
		return
	}
	page, err := c.Billing.ListPromotionRedemptions(v.ctx, &billingv1.ListPromotionRedemptionsRequest{AppId: app.GetId(),
		PromotionId: promotionID, Limit: redemptionsPage, Cursor: cursor})
	if err != nil {
		c.fail(w, r, v, err, "list the promotion's redemptions")
		return
	}
	c.render(w, r, http.StatusOK, "promotion", promotionView{frame: c.frame(w, r, v.p, v.member, "console.promotion.title"),
		App: app, Promotion: promotion, Redemptions: page.GetItems(), Next: page.GetNextCursor(), Paged: cursor != ""})
}

// changePromotion changes a promotion's limits or switches it on or off.
func (c *Console) changePromotion(w http.ResponseWriter, r *http.Request, v visit) {
	id, err := appID(r)
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return
	}
	promotionID, err := promotionID(url.Values{"promotion": {r.PathValue("promotion")}})
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return
	}
	form, ok := c.readForm(w, r, v.p, &v)
	if !ok {
		return
	}
	in, err := promotionChangeFrom(form)
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return
	}
	notice := "saved"
	switch in.Action {
	case promotionLimits:
		l := in.Limits
		_, err = c.Billing.UpdatePromotionLimits(v.ctx, &billingv1.UpdatePromotionLimitsRequest{AppId: id, PromotionId: promotionID,
			MaxRedemptions: &l.MaxRedemptions, ValidFrom: &l.ValidFrom, ValidUntil: &l.ValidUntil})
	case promotionActivate, promotionDeactivate:
		_, err = c.Billing.SetPromotionActive(v.ctx, &billingv1.SetPromotionActiveRequest{AppId: id, PromotionId: promotionID,
			Active: in.Action == promotionActivate})
		notice = map[string]string{promotionActivate: "activated", promotionDeactivate: "deactivated"}[in.Action]
	}
	if err != nil {
		c.fail(w, r, v, err, "change a promotion ("+in.Action+")")
		return
	}
	back(w, r, frame{}.PromotionURL(id, promotionID), notice)
}

// Provider is a connection's provider as operators name it.
func (frame) Provider(p billingv1.Provider) string {
	switch p {
	case billingv1.Provider_PROVIDER_PSPX:
		return "pspx"
	case billingv1.Provider_PROVIDER_PSPY:
		return "pspy"
	}
	return "—"
}

// Money shows a catalog amount (at least 1, in minor units of currency) with two decimals
// ("12.50 EUR"), as the catalog's currencies have.
func (frame) Money(amount int64, currency string) string {
	return fmt.Sprintf("%d.%02d %s", amount/100, amount%100, currency)
}

// Percent shows basis points as a percentage ("19.00 %").
func (frame) Percent(basisPoints int32) string {
	return fmt.Sprintf("%d.%02d %%", basisPoints/100, basisPoints%100)
}

// WebhookSecrets counts a connection's webhook signing secrets of one mode.
func (frame) WebhookSecrets(c *billingv1.Connection, test bool) int {
	n := 0
	for _, s := range c.GetWebhookSecrets() {
		if s.GetTest() == test {
			n++
		}
	}
	return n
}

// Day is an RFC 3339 bound as the limits form shows it: the day alone when it is midnight UTC
// (as the form's day input stores it), else the time as stored, so saving the form unchanged
// keeps it.
func (frame) Day(rfc3339 string) string {
	if day, ok := strings.CutSuffix(rfc3339, "T00:00:00Z"); ok {
		return day
	}
	return rfc3339
}

// limitFieldsView fills the "limitFields" template: the form's ids start with Prefix.
type limitFieldsView struct {
	frame
	Prefix      string
	Max         int32
	From, Until string
}

// LimitFields is a promotion's limits for the "limitFields" template.
func (f frame) LimitFields(prefix string, maxRedemptions int32, from, until string) limitFieldsView {
	return limitFieldsView{frame: f, Prefix: prefix, Max: maxRedemptions, From: from, Until: until}
}
