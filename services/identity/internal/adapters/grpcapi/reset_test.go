package grpcapi_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/authn"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// waitResetText waits for the n-th password-reset mail's text part (reset mails go out after the
// answer); other mails, such as a sign-up's verification mail, are not counted.
func (m *mailbox) waitResetText(t *testing.T, n int) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		m.mu.Lock()
		var resets []string
		for _, msg := range m.sent {
			if strings.Contains(msg.Text, "/login/recover?") {
				resets = append(resets, msg.Text)
			}
		}
		m.mu.Unlock()
		if len(resets) >= n {
			return resets[n-1]
		}
	}
	t.Fatalf("reset mail %d was never sent", n)
	return ""
}

func TestPasswordResetOverGRPCEndsTheOldSessionsAndContinuesTheRequest(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	old := e.signedIn(t, a, "grace@example.test")
	svc := ctxWith(t, authn.MDServiceToken, serviceToken)
	params := &identityv1.LoginParams{ClientId: a.app.GetId(), RedirectUri: "https://app.test/cb", State: "s2", Nonce: "n"}
	start := &identityv1.StartPasswordResetRequest{Params: params, Email: "grace@example.test", ClientIp: "192.0.2.9"}

	_, err := e.login.StartPasswordReset(ctxWith(t), start)
	wantCode(t, "reset without the service token", err, codes.Unauthenticated)
	_, err = e.login.StartPasswordReset(svc, &identityv1.StartPasswordResetRequest{Params: params, Email: "\x00", ClientIp: "192.0.2.9"})
	wantCode(t, "malformed email", err, codes.InvalidArgument)
	unknown, err := e.login.StartPasswordReset(svc, &identityv1.StartPasswordResetRequest{Params: params, Email: "nobody@example.test", ClientIp: "192.0.2.9"})
	if err != nil || unknown.GetFlowId() == "" {
		t.Fatalf("unknown address = %v, %v", unknown, err)
	}
	flow, err := e.login.StartPasswordReset(svc, start)
	if err != nil || flow.GetFlowId() == "" {
		t.Fatalf("known address = %v, %v", flow, err)
	}
	text := e.mailbox.waitResetText(t, 1)
	code := regexp.MustCompile(`(?m)^[0-9]{6}$`).FindString(text)
	link, err := url.Parse(regexp.MustCompile(`https://berth\.test/login/recover\?\S+`).FindString(text))
	if err != nil || code == "" || link.Query().Get("token") == "" {
		t.Fatalf("mail text lacks the link or code:\n%s", text)
	}

	proof := func(flow, code string) *identityv1.PasswordResetProof {
		return &identityv1.PasswordResetProof{ClientId: a.app.GetId(), FlowId: flow, Code: code}
	}
	_, err = e.login.CheckPasswordReset(svc, &identityv1.CheckPasswordResetRequest{Proof: proof(unknown.GetFlowId(), code)})
	wantCode(t, "code of an unknown address's flow", err, codes.InvalidArgument)
	lc, err := e.login.CheckPasswordReset(svc, &identityv1.CheckPasswordResetRequest{Proof: &identityv1.PasswordResetProof{Link: link.Query().Get("token")}})
	if err != nil || lc.GetAppName() != "app" {
		t.Fatalf("CheckPasswordReset(link) = %v, %v", lc, err)
	}
	redirect, err := e.login.CompletePasswordReset(svc, &identityv1.CompletePasswordResetRequest{
		Proof: proof(flow.GetFlowId(), code), Password: "a brand new passphrase", ClientIp: "192.0.2.9",
	})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(redirect.GetUrl())
	if err != nil || u.Query().Get("state") != "s2" || u.Query().Get("code") == "" {
		t.Fatalf("redirect = %v, %v", redirect, err)
	}
	_, err = e.token.ExchangeToken(ctxWith(t), &identityv1.ExchangeTokenRequest{
		ClientId: a.app.GetId(), GrantType: "authorization_code", RefreshToken: old.GetRefreshToken(), Nonce: "n2",
	})
	if err == nil {
		t.Error("the refresh token issued before the reset still works")
	}
}
