package contract

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// auditEntryFields is the shape of an audit log item.
var auditEntryFields = map[string]string{
	"id": str, "at": str, "action": str, "targetType": str, "targetId": str, "actor": obj, "requestId": str,
	"clientAddress": str, "changedFields": arr,
}

// keyID is the id of the demo app's API key: what the audit log names it by.
func (e *env) keyID(t *testing.T, key, typ string) string {
	t.Helper()
	conn, err := grpcx.Dial(e.stack.Addr("identity"), e.serviceToken, e.stack.TLS)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k, err := identityv1.NewIdentityInternalServiceClient(conn).VerifyApiKey(ctx,
		&identityv1.VerifyApiKeyRequest{ApiKey: key, ApiKeyType: typ, ClientId: e.demo.AppID})
	if err != nil {
		t.Fatal(err)
	}
	return k.GetKeyId()
}

// auditLog lists the demo app's audit log of the last two days with the filters in q.
func (e *env) auditLog(t *testing.T, headers map[string]string, q url.Values) []map[string]any {
	t.Helper()
	q.Set("from", day(-1))
	q.Set("to", day(1))
	data := e.do(http.MethodGet, "/v1/apps/"+e.demo.AppID+"/audit-log?"+q.Encode(), headers, "").ok(t, http.StatusOK)
	assertShape(t, "audit log data", data, map[string]string{"kind": str, "itemsLength": num, "items": arr})
	d := data.(map[string]any)
	if d["kind"] != "auditEntry" {
		t.Fatalf("kind %v, want auditEntry", d["kind"])
	}
	var out []map[string]any
	for _, it := range d["items"].([]any) {
		assertShape(t, "audit entry", it, auditEntryFields)
		out = append(out, it.(map[string]any))
	}
	return out
}

// A change made through route 18 with the write key is in the app's audit log, named by the key's
// id and type, with the request's id, the caller's address and the names of the fields it changed
// (never their values); a member of another project and another app's key are refused, and a bad
// filter is a 400 in the route's envelope.
func TestAChangeThroughRoute18IsAuditedWithTheWriteKeyAsActor(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			user := e.demo.UserIDs[0]
			writeKey := e.keyID(t, e.demo.WriteKey, "write")
			headers := e.write()
			headers["X-Request-Id"] = "audit-contract-" + backend
			e.do(http.MethodPut, "/v1/users/"+user, headers, `{"user":{"nickname":"Auditor","locale":"de-DE"}}`).ok(t, http.StatusOK)

			filter := url.Values{"action": {"identity.user.updated"}, "targetId": {user}, "actorKind": {"api_key"}}
			var got map[string]any
			testkit.Eventually(t, "the change reaches the audit log", func() bool {
				for _, entry := range e.auditLog(t, e.read(), filter) {
					if entry["requestId"] == headers["X-Request-Id"] {
						got = entry
					}
				}
				return got != nil
			})
			actor := got["actor"].(map[string]any)
			if actor["kind"] != "api_key" || actor["id"] != writeKey || actor["keyType"] != "write" {
				t.Fatalf("actor %v, want the write key %s", actor, writeKey)
			}
			if got["clientAddress"] == "" || got["targetType"] != "user" {
				t.Fatalf("entry %v, want a client address and the user as target", got)
			}
			var fields []string
			for _, f := range got["changedFields"].([]any) {
				fields = append(fields, f.(string))
			}
			slices.Sort(fields)
			if !slices.Equal(fields, []string{"locale", "nickname"}) {
				t.Fatalf("changed fields %v, want [locale nickname]", fields)
			}
			for _, v := range []string{"Auditor", "de-DE", e.demo.WriteKey} {
				if raw := e.do(http.MethodGet, "/v1/apps/"+e.demo.AppID+"/audit-log?from="+day(-1)+"&to="+day(1), e.read(), "").raw; strings.Contains(raw, v) {
					t.Fatalf("the audit log shows the value %q", v)
				}
			}

			// The app's project member reads it too; another project's member and another app's key do not.
			member := map[string]string{"Authorization": "Bearer " + e.operatorToken(t, e.demo.ProjectID, "auditor@example.test")}
			if len(e.auditLog(t, member, url.Values{"targetId": {user}})) == 0 {
				t.Fatal("the project's member sees no entry of the user")
			}
			outsider := map[string]string{"Authorization": "Bearer " + e.operatorToken(t, e.other.ProjectID, "outsider@example.test")}
			q := "?from=" + day(-1) + "&to=" + day(1)
			e.do(http.MethodGet, "/v1/apps/"+e.demo.AppID+"/audit-log"+q, outsider, "").fails(t, http.StatusForbidden)
			e.do(http.MethodGet, "/v1/apps/"+e.demo.AppID+"/audit-log"+q, creds(e.other.ReadKey, "read", e.other.AppID), "").fails(t, http.StatusBadRequest)
			e.do(http.MethodGet, "/v1/apps/"+e.demo.AppID+"/audit-log"+q, e.write(), "").fails(t, http.StatusForbidden)

			for _, bad := range []string{"", "?from=" + day(0), "?from=" + day(1) + "&to=" + day(0), q + "&actorKind=robot",
				q + "&targetType=invoice", q + "&action=user.updated"} {
				e.do(http.MethodGet, "/v1/apps/"+e.demo.AppID+"/audit-log"+bad, e.read(), "").fails(t, http.StatusBadRequest)
			}
		})
	}
}
