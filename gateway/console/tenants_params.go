package console

import (
	"net/http"
	"net/url"
)

// tenantSearch is the tenants page's search: a name prefix or a tenant id ("" lists all), and the
// cursor of the page to show ("" for the first).
type tenantSearch struct{ Query, After string }

func tenantSearchFrom(v url.Values) (tenantSearch, error) {
	q, err := textField(v, "q", maxEmail, false)
	if err != nil {
		return tenantSearch{}, err
	}
	// The cursor is tenant's to check; the console bounds it as keyset does (a long tenant name
	// makes a long cursor).
	after, err := textField(v, "after", maxToken, false)
	if err != nil {
		return tenantSearch{}, err
	}
	return tenantSearch{Query: q, After: after}, nil
}

// tenantRef is the app and tenant a tenant page's path names, checked.
type tenantRef struct{ App, Tenant string }

func tenantRefOf(r *http.Request) (tenantRef, error) {
	v := url.Values{"app": {r.PathValue("app")}, "tenant": {r.PathValue("tenant")}}
	a, err := id(v, "app")
	if err != nil {
		return tenantRef{}, err
	}
	t, err := id(v, "tenant")
	if err != nil {
		return tenantRef{}, err
	}
	return tenantRef{App: a, Tenant: t}, nil
}

// The provider modes whose invoices the tenant page lists: live unless the link asks for test.
const (
	modeLive = "live"
	modeTest = "test"
)

// invoiceModeFrom reads the tenant page's invoice mode; none is live.
func invoiceModeFrom(v url.Values) (string, error) {
	m, err := oneOf(v, "mode", "", modeLive, modeTest)
	if err != nil {
		return "", err
	}
	if m == "" {
		m = modeLive
	}
	return m, nil
}

// The tenant page's actions.
const (
	tenantFreeze   = "freeze"
	tenantUnfreeze = "unfreeze"
)

// tenantFrom reads a posted action of the tenant page. A freeze must carry its confirmation: the
// app sees it at once on the tenant (route 5's freezed), and no payment lifts it, only an
// operator's unfreeze.
func tenantFrom(v url.Values) (string, error) {
	a, err := oneOf(v, "action", tenantFreeze, tenantUnfreeze)
	if err != nil {
		return "", err
	}
	if a == tenantFreeze {
		if err := confirmed(v); err != nil {
			return "", err
		}
	}
	return a, nil
}
