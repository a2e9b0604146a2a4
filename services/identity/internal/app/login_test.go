package app_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/grpcx"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

const (
	goodPassword = "correct horse battery"
	clientIP     = "203.0.113.7"
)

func (f *fixture) params() app.LoginParams {
	return app.LoginParams{ClientID: f.app.ID, RedirectURI: "https://app.test/cb", State: "state-1", Nonce: "nonce-1", Scope: "openid email"}
}

// signUp signs up email with goodPassword and returns the redirect URL.
func (f *fixture) signUp(t *testing.T, email string) string {
	t.Helper()
	out, err := f.svc.SignUp(context.Background(), app.SignUpInput{Params: f.params(), Email: email, Password: goodPassword, Name: "Grace", ClientIP: clientIP})
	if err != nil {
		t.Fatalf("SignUp(%s): %v", email, err)
	}
	return out.URL
}

func (f *fixture) signIn(email, pw string) (string, error) {
	out, err := f.svc.SignIn(context.Background(), app.SignInInput{Params: f.params(), Email: email, Password: pw, ClientIP: clientIP})
	return out.URL, err
}

// codeOf is the gRPC code a caller receives for err: use cases return faults, which the server
// chain maps once (grpcx).
func codeOf(err error) codes.Code { return grpcx.StatusOf(err).Code() }

// fieldOf is the field an InvalidArgument error names.
func fieldOf(err error) string { return grpcx.FieldOf(grpcx.StatusOf(err)) }

func wantStatus(t *testing.T, what string, err error, want codes.Code) {
	t.Helper()
	if got := codeOf(err); got != want {
		t.Fatalf("%s: code = %v (%v), want %v", what, got, err, want)
	}
}

func query(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

func TestDescribeLoginChecksAppAndRedirect(t *testing.T) {
	f := newFixture(t)
	disabled := f.newApp(t)
	if _, err := f.svc.SetAppEnabled(context.Background(), disabled.ID, false); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, client, redirect string
		ok                     bool
	}{
		{"registered redirect", f.app.ID, "https://app.test/cb", true},
		{"upper-case client id", strings.ToUpper(f.app.ID), "https://app.test/cb", true},
		{"trailing slash added", f.app.ID, "https://app.test/cb/", true},
		{"registered with a query", f.app.ID, "https://app.test/return?from=login", true},
		{"two trailing slashes", f.app.ID, "https://app.test/cb//", false},
		{"other path", f.app.ID, "https://app.test/cb/x", false},
		{"other host", f.app.ID, "https://evil.test/cb", false},
		{"empty redirect", f.app.ID, "", false},
		{"unknown app", uuid.NewString(), "https://app.test/cb", false},
		{"malformed client id", "app", "https://app.test/cb", false},
		{"disabled app", disabled.ID, "https://app.test/cb", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := f.svc.DescribeLogin(context.Background(), c.client, c.redirect)
			if c.ok {
				if err != nil || a.ID != f.app.ID {
					t.Fatalf("DescribeLogin = %v, %v", a.ID, err)
				}
				return
			}
			wantStatus(t, c.name, err, codes.InvalidArgument)
		})
	}
}

func TestSignUpCreatesTenantUserAndCode(t *testing.T) {
	f := newFixture(t)
	f.drain(t)
	redirect := f.signUp(t, "  Grace@Example.test ")
	if !slices.Equal(f.tenants.names, []string{"Grace@Example.test"}) {
		t.Errorf("tenants created = %v, want one named after the email", f.tenants.names)
	}
	u, err := f.svc.GetUser(context.Background(), f.app.ID, "grace@example.test")
	if err != nil {
		t.Fatal(err)
	}
	if u.TenantID == "" || u.EmailVerified || u.Name != "Grace" || !strings.HasPrefix(u.PasswordHash, "$argon2id$v=19$") {
		t.Errorf("user = %+v", u)
	}
	if u.LastSignInAt == nil || !u.LastSignInAt.Equal(clockTime) || u.LastSignInIP != clientIP {
		t.Errorf("sign-in not recorded: %v %q", u.LastSignInAt, u.LastSignInIP)
	}
	q := query(t, redirect)
	if !strings.HasPrefix(redirect, "https://app.test/cb?") || !domain.WellFormedSecret(q.Get("code")) ||
		q.Get("state") != "state-1" || q.Get("service") != "email" || q.Get("client_id") != f.app.ID ||
		q.Get("nonce") != "nonce-1" || q.Get("scope") != "openid email" {
		t.Errorf("redirect = %s", redirect)
	}
	evs := f.drain(t)
	if !slices.Equal(types(evs), []eventsv1.Type{identityv1.EventUserCreated, identityv1.EventUserSignedIn}) {
		t.Fatalf("events = %v", types(evs))
	}
	var c identityv1.UserChanged
	if err := evs[0].Decode(&c); err != nil || c.GetUserId() != u.ID || c.GetTenantRef() != u.TenantID || !strings.EqualFold(c.GetUser().GetEmail(), "grace@example.test") {
		t.Errorf("UserChanged (created) = %+v, %v", &c, err)
	}
	var p identityv1.UserSignedIn
	if err := evs[1].Decode(&p); err != nil || p.GetUserId() != u.ID || p.GetTenantRef() != u.TenantID || p.GetIp() != clientIP || p.GetAt() != "2025-06-07T08:09:10Z" {
		t.Errorf("UserSignedIn = %+v, %v", &p, err)
	}
}

func TestSignUpRefusals(t *testing.T) {
	f := newFixture(t)
	disabled := f.newApp(t)
	if _, err := f.svc.SetAppEnabled(context.Background(), disabled.ID, false); err != nil {
		t.Fatal(err)
	}
	in := func(mut func(*app.SignUpInput)) app.SignUpInput {
		x := app.SignUpInput{Params: f.params(), Email: "new@example.test", Password: goodPassword, ClientIP: clientIP}
		mut(&x)
		return x
	}
	cases := []struct {
		name  string
		in    app.SignUpInput
		code  codes.Code
		field string
	}{
		{"registered address, other case", in(func(x *app.SignUpInput) { x.Email = "ADA@example.test" }), codes.InvalidArgument, ""},
		{"bad email", in(func(x *app.SignUpInput) { x.Email = "not mail" }), codes.InvalidArgument, "email"},
		{"short password", in(func(x *app.SignUpInput) { x.Password = "kq7#zt2" }), codes.InvalidArgument, "password"},
		{"common password", in(func(x *app.SignUpInput) { x.Password = "123456789" }), codes.InvalidArgument, "password"},
		{"password holding the email's name", in(func(x *app.SignUpInput) { x.Password = "brand NEW horse 7" }), codes.InvalidArgument, "password"},
		{"blank password", in(func(x *app.SignUpInput) { x.Password = strings.Repeat(" ", 12) }), codes.InvalidArgument, "password"},
		{"name with a control character", in(func(x *app.SignUpInput) { x.Name = "a\x00b" }), codes.InvalidArgument, "name"},
		{"unregistered redirect", in(func(x *app.SignUpInput) { x.Params.RedirectURI = "https://evil.test/" }), codes.InvalidArgument, "redirect_uri"},
		{"disabled app", in(func(x *app.SignUpInput) { x.Params.ClientID = disabled.ID }), codes.PermissionDenied, ""},
		{"oversized state", in(func(x *app.SignUpInput) { x.Params.State = strings.Repeat("s", 513) }), codes.InvalidArgument, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.svc.SignUp(context.Background(), c.in)
			wantStatus(t, c.name, err, c.code)
			if c.field != "" && fieldOf(err) != c.field {
				t.Errorf("field = %q, want %q", fieldOf(err), c.field)
			}
		})
	}
	if len(f.tenants.names) != 0 {
		t.Errorf("refused sign-ups created tenants %v", f.tenants.names)
	}
	// The registered address gets the answer any refused details get, not "address taken".
	_, err := f.svc.SignUp(context.Background(), in(func(x *app.SignUpInput) { x.Email = "ada@example.test" }))
	if st := grpcx.StatusOf(err); st.Message() != "could not sign up with these details" {
		t.Errorf("message for a registered address = %q", st.Message())
	}
}

func TestSignUpWithoutTenantServiceIsUnavailable(t *testing.T) {
	f := newFixture(t)
	svc, err := app.New(app.Config{Store: f.store, Pepper: []byte("p"), Box: f.box, Passwords: cheapPasswords})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.SignUp(context.Background(), app.SignUpInput{Params: f.params(), Email: "x@example.test", Password: goodPassword})
	wantStatus(t, "no tenant service", err, codes.Unavailable)
	f.tenants.fail = errors.New("tenant down")
	_, err = f.svc.SignUp(context.Background(), app.SignUpInput{Params: f.params(), Email: "x@example.test", Password: goodPassword})
	wantStatus(t, "tenant service failing", err, codes.Internal)
}

func TestSignInAnswersUnknownAndWrongAlike(t *testing.T) {
	f := newFixture(t)
	f.signUp(t, "grace@example.test")
	f.newUser(t, f.app.ID, "nopass@example.test", "") // provisioned by an operator: no password
	redirect, err := f.signIn("GRACE@example.test", goodPassword)
	if err != nil || !domain.WellFormedSecret(query(t, redirect).Get("code")) {
		t.Fatalf("SignIn = %s, %v", redirect, err)
	}
	var messages []string
	for _, c := range []struct{ email, pw string }{
		{"grace@example.test", "wrong password!"},
		{"nobody@example.test", goodPassword},
		{"nopass@example.test", goodPassword},
		{"nopass@example.test", ""},
		{"not an email", goodPassword},
		{"grace@example.test", strings.Repeat("x", 600)},
	} {
		_, err := f.signIn(c.email, c.pw)
		wantStatus(t, c.email, err, codes.InvalidArgument)
		messages = append(messages, grpcx.StatusOf(err).Message())
	}
	for _, m := range messages {
		if m != "invalid email or password" {
			t.Errorf("messages differ: %q", messages)
		}
	}
}

func TestSignInRefusesFrozenAndDeletedUsersOnlyAfterThePassword(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		change func(f *fixture, id string) error
	}{
		{"frozen", func(f *fixture, id string) error { return f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, id, "0") }},
		{"deleted", func(f *fixture, id string) error { return f.svc.DeleteUser(ctx, f.app.ID, id) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.signUp(t, "grace@example.test")
			u, _ := f.svc.GetUser(ctx, f.app.ID, "grace@example.test")
			if err := c.change(f, u.ID); err != nil {
				t.Fatal(err)
			}
			_, err := f.signIn("grace@example.test", "wrong password!")
			wantStatus(t, "wrong password", err, codes.InvalidArgument)
			_, err = f.signIn("grace@example.test", goodPassword)
			wantStatus(t, "right password", err, codes.PermissionDenied)
		})
	}
	f := newFixture(t)
	f.signUp(t, "grace@example.test")
	if _, err := f.svc.SetAppEnabled(ctx, f.app.ID, false); err != nil {
		t.Fatal(err)
	}
	_, err := f.signIn("grace@example.test", goodPassword)
	wantStatus(t, "disabled app", err, codes.PermissionDenied)
}

func TestSignInAttemptLimits(t *testing.T) {
	t.Run("per email, reset by the window and by success", func(t *testing.T) {
		f := newFixture(t)
		f.signUp(t, "grace@example.test")
		for range app.DefaultLoginLimits.PerEmailAddress {
			_, err := f.signIn("grace@example.test", "wrong password!")
			wantStatus(t, "failure below the limit", err, codes.InvalidArgument)
		}
		_, err := f.signIn("Grace@example.test", goodPassword)
		wantStatus(t, "right password after the limit", err, codes.ResourceExhausted)
		if !strings.Contains(grpcx.StatusOf(err).Message(), "15 minutes") {
			t.Errorf("message %q does not say when to retry", grpcx.StatusOf(err).Message())
		}
		if got := grpcx.RetryAfterOf(grpcx.StatusOf(err)); got != 15*time.Minute {
			t.Errorf("retry-after = %v, want the 15-minute window", got)
		}
		if _, err := f.signIn("other@example.test", "wrong password!"); grpcx.StatusOf(err).Code() != codes.InvalidArgument {
			t.Errorf("another address is limited too: %v", err)
		}
		f.now = f.now.Add(app.DefaultLoginLimits.Window + time.Second)
		if _, err := f.signIn("grace@example.test", goodPassword); err != nil {
			t.Fatalf("after the window: %v", err)
		}
		// Success cleared the count: a full allowance of typos again.
		for range app.DefaultLoginLimits.PerEmailAddress - 1 {
			_, _ = f.signIn("grace@example.test", "wrong password!")
		}
		if _, err := f.signIn("grace@example.test", goodPassword); err != nil {
			t.Fatalf("success did not reset the count: %v", err)
		}
	})
	t.Run("per client address across emails", func(t *testing.T) {
		f := newFixture(t)
		for range app.DefaultLoginLimits.PerIP {
			_, err := f.signIn(uuid.NewString()+"@example.test", "wrong password!")
			wantStatus(t, "spray", err, codes.InvalidArgument)
		}
		_, err := f.signIn("ada@example.test", "whatever pw")
		wantStatus(t, "address over its limit", err, codes.ResourceExhausted)
		_, err = f.svc.SignIn(context.Background(), app.SignInInput{Params: f.params(), Email: "ada@example.test", Password: "whatever pw", ClientIP: "198.51.100.1"})
		wantStatus(t, "another address", err, codes.InvalidArgument)
		_, err = f.svc.SignUp(context.Background(), app.SignUpInput{Params: f.params(), Email: "fresh@example.test", Password: goodPassword, ClientIP: clientIP})
		wantStatus(t, "sign-up from the limited address", err, codes.ResourceExhausted)
	})
}

func TestRedirectKeepsTheRegisteredQuery(t *testing.T) {
	f := newFixture(t)
	p := f.params()
	p.RedirectURI, p.Nonce, p.Scope, p.State = "https://app.test/return?from=login", "", "", "a b&c"
	out, err := f.svc.SignUp(context.Background(), app.SignUpInput{Params: p, Email: "q@example.test", Password: goodPassword})
	if err != nil {
		t.Fatal(err)
	}
	redirect := out.URL
	q := query(t, redirect)
	if !strings.HasPrefix(redirect, "https://app.test/return?") || q.Get("from") != "login" || q.Get("state") != "a b&c" || q.Has("nonce") || q.Has("scope") {
		t.Errorf("redirect = %s", redirect)
	}
}
