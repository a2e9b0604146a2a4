package contract

import (
	"context"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/mail"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// TestOperatorKeyUpdateAndReferralInvites covers route 2 (operator JWT, /api/v1 family) and route
// 23 (referral invites through the mail port) through the REST edge.
func TestOperatorKeyUpdateAndReferralInvites(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			ctx := context.Background()
			key, err := e.admin.Identity.CreateApiKey(ctx, &identityv1.CreateApiKeyRequest{AppId: e.demo.AppID, Type: "read", Name: "backend"})
			if err != nil {
				t.Fatal(err)
			}
			member, err := e.admin.Identity.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: e.demo.ProjectID, Email: "ops@example.com", Name: "Ops"})
			if err != nil {
				t.Fatal(err)
			}
			op, err := e.admin.Identity.IssueOperatorToken(ctx, &identityv1.IssueOperatorTokenRequest{MemberId: member.GetId()})
			if err != nil {
				t.Fatal(err)
			}
			otherMember, _ := e.admin.Identity.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: e.other.ProjectID, Email: "ops@example.com"})
			otherOp, _ := e.admin.Identity.IssueOperatorToken(ctx, &identityv1.IssueOperatorTokenRequest{MemberId: otherMember.GetId()})

			path := "/api/v1/internal/projects/" + e.demo.ProjectID + "/apps/" + e.demo.AppID + "/api-keys/" + key.GetKey().GetUuid()
			r := e.do("PUT", path, bearer(op.GetToken()), `{"name":"renamed","description":"rotated by ops","type":"write"}`)
			if r.status != 200 {
				t.Fatalf("route 2: %d %s", r.status, r.raw)
			}
			assertShape(t, "appApiKeys envelope", r.body, map[string]string{"kind": str, "totalItems": num, "itemsLength": num, "items": arr})
			items := r.body.(map[string]any)["items"].([]any)
			assertShape(t, "API key item", items[0], map[string]string{"uuid": str, "name": str, "type": str, "createdAt": str, "updatedAt": str})
			if it := items[0].(map[string]any); it["kind"] != nil || it["name"] != "renamed" || it["type"] != "read" || it["uuid"] != key.GetKey().GetUuid() {
				t.Fatalf("item = %v", it)
			}
			if r.body.(map[string]any)["kind"] != "appApiKeys" {
				t.Fatalf("kind = %v", r.body.(map[string]any)["kind"])
			}

			code := e.signUp(t, "operator.check@example.com", "n")
			appToken := e.exchange(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code", "code": code, "redirect_uri": e.demo.RedirectURI, "nonce": "n"})
			e.apiFails(t, e.do("PUT", path, nil, `{"name":"x"}`), 401, "[E4010]")
			e.apiFails(t, e.do("PUT", path, bearer(appToken.access), `{"name":"x"}`), 401, "[E4010]")
			e.apiFails(t, e.do("PUT", path, bearer(otherOp.GetToken()), `{"name":"x"}`), 401, "[E4010]")
			e.apiFails(t, e.do("PUT", path, e.write(), `{"name":"x"}`), 401, "[E4010]")
			e.apiFails(t, e.do("PUT", path, bearer(op.GetToken()), `{"name":""}`), 400, "[E4000]")
			e.apiFails(t, e.do("PUT", path, bearer(op.GetToken()), `{"name":`), 400, "[E4000]")
			e.apiFails(t, e.do("PUT", strings.Replace(path, key.GetKey().GetUuid(), "not-a-uuid", 1), bearer(op.GetToken()), `{"name":"x"}`), 400, "[E4000]")
			if _, err := e.admin.Identity.SetAppEnabled(ctx, &identityv1.SetAppEnabledRequest{AppId: e.demo.AppID, Enabled: false}); err != nil {
				t.Fatal(err)
			}
			r = e.do("PUT", path, bearer(op.GetToken()), `{"name":"x"}`)
			e.apiFails(t, r, 403, "[E4030]")
			if msg := r.body.(map[string]any)["errors"].([]any)[0].(map[string]any)["message"]; msg != "App Is Disabled" {
				t.Fatalf("403 message = %v", msg)
			}
			if _, err := e.admin.Identity.SetAppEnabled(ctx, &identityv1.SetAppEnabledRequest{AppId: e.demo.AppID, Enabled: true}); err != nil {
				t.Fatal(err)
			}

			// Route 23: 201 with data null, one email in the requested language through the mail port.
			invites := "/v1/users/" + e.demo.UserIDs[0] + "/referral-invites"
			if data := e.do("POST", invites, e.write(), `{"email":"friend@example.com","language":"DE"}`).ok(t, 201); data != nil {
				t.Fatalf("data = %v, want null", data)
			}
			// Only the invites count: the sign-ups above got verification mails of their own.
			invitesSent := func() []mail.Message {
				var out []mail.Message
				for _, m := range e.stack.Mailbox.Messages() {
					if m.To == "friend@example.com" {
						out = append(out, m)
					}
				}
				return out
			}
			msgs := invitesSent()
			if len(msgs) != 1 || msgs[0].To != "friend@example.com" || !strings.Contains(msgs[0].Text, "referral=") || !strings.Contains(msgs[0].Text, e.demo.AppID) {
				t.Fatalf("mailbox = %+v", msgs)
			}
			e.do("POST", invites, e.write(), `{"email":"friend@example.com","language":"xx"}`).fails(t, 400)
			e.do("POST", invites, e.write(), `{"email":"not-an-email","language":"en"}`).fails(t, 400)
			e.do("POST", invites, e.read(), `{"email":"friend@example.com","language":"en"}`).fails(t, 403)
			e.do("POST", "/v1/users/"+e.other.UserIDs[0]+"/referral-invites", e.write(), `{"email":"friend@example.com","language":"en"}`).fails(t, 400)
			e.do("POST", invites, bearer(appToken.access), `{"email":"friend@example.com","language":"en"}`).fails(t, 403) // another user's token
			if n := len(invitesSent()); n != 1 {
				t.Fatalf("refused invites sent mail: %d messages", n)
			}
		})
	}
}
