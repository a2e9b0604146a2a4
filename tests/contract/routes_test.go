package contract

import (
	"context"

	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"github.com/berthhq/berth/pkg/testkit"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"strings"
	"testing"
)

func TestRESTEdgeContract(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			t.Run("route 5 tenant read", e.tenantRead)
			t.Run("route 11 user roles", e.userRoles)
			t.Run("route 14 user read", e.userRead)
			t.Run("route 15 public key", e.publicKey)
			t.Run("route 16 access status", e.accessStatus)
			t.Run("route 17 tenant update", e.tenantUpdate)
			t.Run("route 18 user update", e.userUpdate)
			t.Run("credentials", e.credentials)
			t.Run("routing errors", e.routing)
		})
	}
}

func (e *env) tenantRead(t *testing.T) {
	e.t = t
	data := e.do("GET", "/v1/tenants/"+e.demo.TenantID+"?test=true", e.read(), "").ok(t, 200)
	assertShape(t, "tenant", data, tenantFields)
	tn := data.(map[string]any)
	if tn["kind"] != "tenant" || tn["id"] != e.demo.TenantID || tn["name"] != "Demo tenant" {
		t.Fatalf("tenant = %v", tn)
	}
	assertShape(t, "shippingAddress", tn["shippingAddress"], addressFields)
	assertShape(t, "billingAddress", tn["billingAddress"], addressFields)
	if tn["shippingAddress"].(map[string]any)["type"] != "shipping" || tn["billingAddress"].(map[string]any)["city"] != "Hamburg" {
		t.Fatalf("addresses = %v / %v", tn["shippingAddress"], tn["billingAddress"])
	}
	users := tn["users"].([]any)
	if len(users) != 2 {
		t.Fatalf("want the tenant's 2 users, got %d", len(users))
	}
	for _, u := range users {
		assertShape(t, "tenant user", u, tenantUserFields)
		if u.(map[string]any)["tenantId"] != true {
			t.Fatalf("tenant user tenantId = %v, want true", u.(map[string]any)["tenantId"])
		}
	}

	e.do("GET", "/v1/tenants/"+e.other.TenantID, e.read(), "").fails(t, 400) // another app's tenant
	e.do("GET", "/v1/tenants/not-a-uuid", e.read(), "").fails(t, 400)        // bad id
	e.do("GET", "/v1/tenants/"+e.demo.TenantID, e.write(), "").fails(t, 403) // wrong key type
	e.do("GET", "/v1/tenants/"+e.demo.TenantID, nil, "").fails(t, 401)       // no credentials
	e.do("GET", "/v1/tenants/00000000-0000-4000-8000-000000000000", e.read(), "").fails(t, 400)
}

func (e *env) userRoles(t *testing.T) {
	e.t = t
	for _, h := range []map[string]string{e.read(), e.write()} {
		data := e.do("GET", "/v1/apps/"+e.demo.AppID+"/user-roles", h, "").ok(t, 200)
		assertShape(t, "user roles", data, map[string]string{"kind": str, "itemsLength": num, "items": arr})
		m := data.(map[string]any)
		if m["kind"] != "userRole" || m["itemsLength"] != float64(2) {
			t.Fatalf("roles = %v", m)
		}
		for _, it := range m["items"].([]any) {
			assertShape(t, "user role", it, map[string]string{"id": str, "name": str})
		}
	}
	e.do("GET", "/v1/apps/"+e.other.AppID+"/user-roles", e.read(), "").fails(t, 400)
}

func (e *env) userRead(t *testing.T) {
	e.t = t
	byID := e.do("GET", "/v1/users/"+e.demo.UserIDs[0], e.read(), "").ok(t, 200)
	assertShape(t, "user", byID, userFields)
	u := byID.(map[string]any)
	if u["kind"] != "user" || u["id"] != e.demo.UserIDs[0] || u["appId"] != e.demo.AppID || u["tenantId"] != true {
		t.Fatalf("user = %v", u)
	}
	byEmail := e.do("GET", "/v1/users/"+strings.ToUpper(u["email"].(string)), e.read(), "").ok(t, 200)
	if byEmail.(map[string]any)["id"] != e.demo.UserIDs[0] {
		t.Fatalf("lookup by email found %v", byEmail)
	}
	e.do("GET", "/v1/users/"+e.other.UserIDs[0], e.read(), "").fails(t, 400) // another app's user
	e.do("GET", "/v1/users/nobody@example.com", e.read(), "").fails(t, 400)
	e.do("GET", "/v1/users/not-an-id", e.read(), "").fails(t, 400)
	e.do("GET", "/v1/users/"+e.demo.UserIDs[0], e.write(), "").fails(t, 403)
}

func (e *env) publicKey(t *testing.T) {
	e.t = t
	// The server SDK sends the header as X-API-KEY-Type: header names are case-insensitive.
	h := map[string]string{"X-API-KEY": e.demo.ReadKey, "X-API-KEY-Type": "read", "X-CLIENT-ID": e.demo.AppID}
	data := e.do("GET", "/v1/apps/"+e.demo.AppID+"/public-keys", h, "").ok(t, 200)
	assertShape(t, "public key", data, map[string]string{"kind": str, "publicKey": str})
	block, _ := pem.Decode([]byte(data.(map[string]any)["publicKey"].(string)))
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("not an SPKI PEM: %v", data)
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if rsaKey, ok := key.(*rsa.PublicKey); err != nil || !ok || rsaKey.N.BitLen() != 2048 {
		t.Fatalf("want an RSA-2048 key, got %T %v", key, err)
	}
	e.do("GET", "/v1/apps/"+e.other.AppID+"/public-keys", e.read(), "").fails(t, 400)
}

func (e *env) accessStatus(t *testing.T) {
	e.t = t
	path := "/v1/apps/" + e.demo.AppID + "/users/" + e.demo.UserIDs[1] + "/access-status/"
	frozen := func() any {
		return e.do("GET", "/v1/users/"+e.demo.UserIDs[1], e.read(), "").ok(t, 200).(map[string]any)["freezed"]
	}
	for i := 0; i < 2; i++ { // freezing twice is fine
		if data := e.do("PUT", path+"0", e.write(), "").ok(t, 200); data != nil {
			t.Fatalf("data = %v, want null", data)
		}
		if frozen() != true {
			t.Fatal("user not frozen after access-status 0")
		}
	}
	e.do("PUT", path+"1", e.write(), "").ok(t, 200)
	if frozen() != false {
		t.Fatal("user still frozen after access-status 1")
	}
	e.do("PUT", path+"2", e.write(), "").fails(t, 400)
	e.do("PUT", path+"freeze", e.write(), "").fails(t, 400)
	e.do("PUT", path+"0", e.read(), "").fails(t, 403)
	e.do("PUT", path+"0", nil, "").fails(t, 401)
	e.do("PUT", "/v1/apps/"+e.demo.AppID+"/users/not-a-uuid/access-status/0", e.write(), "").fails(t, 400)
	e.do("PUT", "/v1/apps/"+e.demo.AppID+"/users/"+e.other.UserIDs[0]+"/access-status/0", e.write(), "").fails(t, 400)
	e.do("PUT", "/v1/apps/"+e.other.AppID+"/users/"+e.other.UserIDs[0]+"/access-status/0", e.write(), "").fails(t, 400)
}

func (e *env) tenantUpdate(t *testing.T) {
	e.t = t
	path := "/v1/tenants/" + e.demo.TenantID
	get := func() map[string]any { return e.do("GET", path, e.read(), "").ok(t, 200).(map[string]any) }

	flat := `{"kind":"tenant","companyName":"Flat GmbH","companyTaxExempt":"reverse","isBusinessCustomer":true,
	          "paidUntil":"2099-01-01","freezed":true,"billingAddress":{"city":"Berlin"}}`
	if data := e.do("PUT", path, e.write(), flat).ok(t, 200); data != nil {
		t.Fatalf("data = %v, want null", data)
	}
	tn := get()
	if tn["companyName"] != "Flat GmbH" || tn["companyTaxExempt"] != "reverse" || tn["isBusinessCustomer"] != true {
		t.Fatalf("flat update not applied: %v", tn)
	}
	if tn["paidUntil"] != "" || tn["freezed"] != false {
		t.Fatalf("billing state changed through route 17: paidUntil=%v freezed=%v", tn["paidUntil"], tn["freezed"])
	}
	if tn["billingAddress"].(map[string]any)["city"] != "Berlin" || tn["billingAddress"].(map[string]any)["line1"] != "1 Harbour Street" {
		t.Fatalf("address patch = %v", tn["billingAddress"])
	}

	nested := `{"tenant":{"kind":"tenant","name":"Nested name","description":"via nested body",
	            "shippingAddress":{"name":"Dock 7","type":"ignored","deleted":true}},"test":true}`
	e.do("PUT", path, e.write(), nested).ok(t, 200)
	tn = get()
	if tn["name"] != "Nested name" || tn["description"] != "via nested body" || tn["shippingAddress"].(map[string]any)["name"] != "Dock 7" {
		t.Fatalf("nested update not applied: %v", tn)
	}
	if tn["shippingAddress"].(map[string]any)["deleted"] != false {
		t.Fatal("address deleted flag changed through route 17")
	}

	e.do("PUT", path, e.write(), `{"kind":"tenant","companyTaxExempt":"sometimes"}`).fails(t, 400)
	e.do("PUT", path, e.write(), `{"kind":"user"}`).fails(t, 400)
	e.do("PUT", path, e.write(), `{"kind":`).fails(t, 400)
	e.do("PUT", path, e.read(), `{"kind":"tenant"}`).fails(t, 403)
	e.do("PUT", "/v1/tenants/"+e.other.TenantID, e.write(), `{"kind":"tenant","name":"x"}`).fails(t, 400)
	if other := e.do("GET", "/v1/tenants/"+e.other.TenantID, creds(e.other.ReadKey, "read", e.other.AppID), "").ok(t, 200); other.(map[string]any)["name"] != "Demo tenant" {
		t.Fatal("another app's tenant changed")
	}
}

func (e *env) userUpdate(t *testing.T) {
	e.t = t
	id := e.demo.UserIDs[0]
	get := func() map[string]any { return e.do("GET", "/v1/users/"+id, e.read(), "").ok(t, 200).(map[string]any) }
	if get()["email_verified"] != true {
		t.Fatal("seeded user should start verified")
	}

	body := `{"user":{"nickname":"ada","language":"DE","birthdate":"1815-12-10T00:00:00.000Z","freezed":true,"appId":"x"}}`
	if data := e.do("PUT", "/v1/users/"+id, e.write(), body).ok(t, 200); data != nil {
		t.Fatalf("data = %v, want null", data)
	}
	u := get()
	if u["nickname"] != "ada" || u["birthdate"] != "1815-12-10" || !strings.EqualFold(u["language"].(string), "de") {
		t.Fatalf("update not applied: %v", u)
	}
	if u["freezed"] != false || u["appId"] != e.demo.AppID {
		t.Fatal("an undocumented field changed through route 18")
	}
	if u["email_verified"] != true {
		t.Fatal("email_verified reset without an email change")
	}

	// The POST alias, with `test` in the query, changes the email, which resets verification.
	e.do("POST", "/v1/users/"+id+"?test=true", e.write(), `{"user":{"email":"ada.l@example.com"}}`).ok(t, 200)
	if u = get(); u["email"] != "ada.l@example.com" || u["email_verified"] != false {
		t.Fatalf("email change: %v", u)
	}

	e.do("PUT", "/v1/users/"+id, e.write(), `{"user":{"email":"not-an-email"}}`).fails(t, 400)
	e.do("PUT", "/v1/users/"+id, e.write(), `{"user":{"website":"javascript:alert(1)"}}`).fails(t, 400)
	e.do("PUT", "/v1/users/"+id, e.write(), `{"user":{"email":"grace@example.com"}}`).fails(t, 400) // taken in this app
	e.do("PUT", "/v1/users/"+id, e.read(), `{"user":{"nickname":"x"}}`).fails(t, 403)
	e.do("PUT", "/v1/users/"+e.other.UserIDs[0], e.write(), `{"user":{"nickname":"x"}}`).fails(t, 400)
}

func (e *env) credentials(t *testing.T) {
	e.t = t
	path := "/v1/tenants/" + e.demo.TenantID
	e.do("GET", path, creds(e.demo.ReadKey, "write", e.demo.AppID), "").fails(t, 403)    // claimed type differs
	e.do("GET", path, creds(e.demo.ReadKey, "read", e.other.AppID), "").fails(t, 401)    // client id of another app
	e.do("GET", path, creds(e.demo.ReadKey+"0", "read", e.demo.AppID), "").fails(t, 401) // wrong key
	e.do("GET", path, creds(e.other.ReadKey, "read", e.other.AppID), "").fails(t, 400)   // key of another app
	e.do("GET", path, map[string]string{"Authorization": "Bearer abc.def.ghi"}, "").fails(t, 401)
	e.do("GET", path, map[string]string{"X-API-KEY": e.demo.ReadKey, "X-CLIENT-ID": e.demo.AppID}, "").fails(t, 401)

	// Disabling an app shuts its keys out everywhere: at once in identity, and in the tenant service
	// as soon as the app event has evicted its cached verification.
	otherRead := creds(e.other.ReadKey, "read", e.other.AppID)
	e.do("GET", "/v1/tenants/"+e.other.TenantID, otherRead, "").ok(t, 200) // warm the tenant service's key cache
	setEnabled := func(enabled bool) {
		if _, err := e.admin.Identity.SetAppEnabled(context.Background(), &identityv1.SetAppEnabledRequest{AppId: e.other.AppID, Enabled: enabled}); err != nil {
			t.Fatal(err)
		}
	}
	setEnabled(false)
	e.do("GET", "/v1/users/"+e.other.UserIDs[0], otherRead, "").fails(t, 403)
	testkit.Eventually(t, "the tenant service refuses the disabled app's key", func() bool {
		return e.do("GET", "/v1/tenants/"+e.other.TenantID, otherRead, "").status == 403
	})
	setEnabled(true)
	testkit.Eventually(t, "the tenant service accepts the re-enabled app's key", func() bool {
		return e.do("GET", "/v1/tenants/"+e.other.TenantID, otherRead, "").status == 200
	})
}

func (e *env) routing(t *testing.T) {
	e.t = t
	r := e.do("GET", "/v1/nothing-here", e.read(), "")
	if r.status != 404 {
		t.Fatalf("unknown /v1 path: %d", r.status)
	}
	assertShape(t, "/v1 routing error", r.body, v1ErrorFields)
	r = e.do("DELETE", "/v1/tenants/"+e.demo.TenantID, e.write(), "")
	if r.status != 405 && r.status != 404 {
		t.Fatalf("wrong method: %d", r.status)
	}
	assertShape(t, "/v1 wrong-method error", r.body, v1ErrorFields)
	r = e.do("GET", "/api/v1/nothing-here", nil, "")
	errs, _ := r.body.(map[string]any)["errors"].([]any)
	if r.status != 404 || len(errs) != 1 {
		t.Fatalf("unknown /api path: %d %s", r.status, r.raw)
	}
	assertShape(t, "/api error item", errs[0], apiErrorFields)
	if r.header.Get("X-Request-Id") == "" {
		t.Fatal("no request id on an error response")
	}
}
