package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/identity/internal/adapters/memory"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func (f *fixture) member(t *testing.T, projectID, email string) domain.ProjectMember {
	t.Helper()
	m, err := f.svc.AddProjectMember(context.Background(), projectID, email, "Operator")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (f *fixture) operatorToken(t *testing.T, memberID string) string {
	t.Helper()
	raw, _, err := f.svc.IssueOperatorToken(context.Background(), memberID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestAddProjectMemberValidates(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	m := f.member(t, f.app.ProjectID, "op@example.test")
	if m.ProjectID != f.app.ProjectID || m.Email != "op@example.test" || m.Name != "Operator" || !domain.IsUUID(m.ID) {
		t.Errorf("member = %+v", m)
	}
	_, err := f.svc.AddProjectMember(ctx, f.app.ProjectID, "OP@example.test", "Again")
	wantInvalid(t, err, "email")
	_, err = f.svc.AddProjectMember(ctx, f.app.ProjectID, "not an email", "X")
	wantInvalid(t, err, "email")
	_, err = f.svc.AddProjectMember(ctx, f.app.ProjectID, "x@example.test", " ")
	wantInvalid(t, err, "name")
	_, err = f.svc.AddProjectMember(ctx, "6f1c1c3e-0000-4000-8000-000000000000", "x@example.test", "X")
	wantNotFound(t, err)
}

func TestIssueOperatorTokenLifetimes(t *testing.T) {
	f := newFixture(t)
	m := f.member(t, f.app.ProjectID, "op@example.test")
	for _, tc := range []struct {
		name    string
		ttl     time.Duration
		wantTTL time.Duration // 0 = refused
	}{
		{"zero selects one hour", 0, time.Hour},
		{"ninety seconds", 90 * time.Second, 90 * time.Second},
		{"exactly the maximum", 24 * time.Hour, 24 * time.Hour},
		{"beyond the maximum", 24*time.Hour + time.Second, 0},
		{"negative", -time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, exp, err := f.svc.IssueOperatorToken(context.Background(), m.ID, tc.ttl)
			if tc.wantTTL == 0 {
				wantInvalid(t, err, "ttlSeconds")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := claimsOf(t, raw, 1)
			iat, jexp := int64(c["iat"].(float64)), int64(c["exp"].(float64))
			if iat != f.now.Unix() || jexp-iat != int64(tc.wantTTL/time.Second) || !exp.Equal(time.Unix(jexp, 0)) {
				t.Errorf("iat %d exp %d (returned %v), want lifetime %v", iat, jexp, exp, tc.wantTTL)
			}
			if c["iss"] != testIssuer+"/operators" || c["aud"] != "berth-operators" || c["sub"] != m.ID || c["jti"] == "" {
				t.Errorf("claims = %v", c)
			}
			if h := claimsOf(t, raw, 0); h["alg"] != "RS256" {
				t.Errorf("header = %v", h)
			}
		})
	}
	_, _, err := f.svc.IssueOperatorToken(context.Background(), "6f1c1c3e-0000-4000-8000-000000000000", 0)
	wantNotFound(t, err)
}

func TestVerifyOperatorToken(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	m := f.member(t, f.app.ProjectID, "op@example.test")
	raw := f.operatorToken(t, m.ID)

	p, err := f.svc.VerifyOperatorToken(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != authn.KindOperator || p.UserID != m.ID || p.ProjectID != m.ProjectID || p.AppID != "" {
		t.Errorf("principal = %+v", p)
	}

	appTokens, err := f.exchange(f.code(t, "grace@example.test"))
	if err != nil {
		t.Fatal(err)
	}
	// Another deployment (its own store and operator key) with the same issuer.
	otherBox, _ := sealbox.New([]byte(strings.Repeat("k", sealbox.KeySize)))
	other, err := app.New(app.Config{Store: memory.New(&events.MemoryOutbox{}), Pepper: []byte("p"), Box: otherBox,
		Clock: func() time.Time { return f.now }, Issuer: testIssuer, Passwords: cheapPasswords})
	if err != nil {
		t.Fatal(err)
	}
	foreign, _, err := other.IssueOperatorToken(ctx, f.otherMember(t, other), 0)
	if err != nil {
		t.Fatal(err)
	}
	segs := strings.Split(raw, ".")
	for _, tc := range []struct{ name, raw string }{
		{"an app's access token", appTokens.AccessToken},
		{"an app's ID token", appTokens.IDToken},
		{"a token of another deployment's operator key", foreign},
		{"a tampered payload", segs[0] + "." + segs[1] + "x." + segs[2]},
		{"an unsigned token", segs[0] + "." + segs[1] + "."},
		{"garbage", "not-a-jwt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.VerifyOperatorToken(ctx, tc.raw)
			wantStatus(t, tc.name, err, codes.Unauthenticated)
		})
	}

	t.Run("an operator token is no app access token", func(t *testing.T) {
		_, err := f.svc.VerifyAccessToken(ctx, raw)
		wantStatus(t, "operator token as access token", err, codes.Unauthenticated)
	})

	t.Run("an expired token", func(t *testing.T) {
		saved := f.now
		defer func() { f.now = saved }()
		f.now = f.now.Add(time.Hour + time.Minute)
		_, err := f.svc.VerifyOperatorToken(ctx, raw)
		wantStatus(t, "expired", err, codes.Unauthenticated)
	})
}

// otherMember adds a member of a fresh project to svc and returns its id.
func (f *fixture) otherMember(t *testing.T, svc *app.Service) string {
	t.Helper()
	ctx := context.Background()
	p, err := svc.CreateProject(ctx, "elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	m, err := svc.AddProjectMember(ctx, p.ID, "op@example.test", "Op")
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

func TestUpdateAPIKey(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	member := f.member(t, f.app.ProjectID, "op@example.test")
	stranger := f.otherMember(t, f.svc)
	key, _, err := f.svc.CreateAPIKey(ctx, f.app.ID, "read", "server", "backend")
	if err != nil {
		t.Fatal(err)
	}
	sibling := f.newApp(t) // another project's app
	siblingKey, _, err := f.svc.CreateAPIKey(ctx, sibling.ID, "write", "k", "")
	if err != nil {
		t.Fatal(err)
	}
	sameProjectApp, err := f.svc.CreateApp(ctx, app.NewApp{ProjectID: f.app.ProjectID, Name: "second"})
	if err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	good := app.APIKeyUpdate{ProjectID: f.app.ProjectID, AppID: f.app.ID, KeyID: key.ID}
	with := func(change func(*app.APIKeyUpdate)) app.APIKeyUpdate {
		u := good
		u.Name = ptr("renamed")
		change(&u)
		return u
	}
	for _, tc := range []struct {
		name      string
		member    string
		in        app.APIKeyUpdate
		wantCode  codes.Code
		wantField string
	}{
		{"project id not a UUID", member.ID, with(func(u *app.APIKeyUpdate) { u.ProjectID = "p1" }), codes.InvalidArgument, "projectUuid"},
		{"app id not a UUID", member.ID, with(func(u *app.APIKeyUpdate) { u.AppID = "a1" }), codes.InvalidArgument, "appUuid"},
		{"key id not a UUID", member.ID, with(func(u *app.APIKeyUpdate) { u.KeyID = "k1" }), codes.InvalidArgument, "apiKeyUuid"},
		{"member of another project", stranger, with(func(*app.APIKeyUpdate) {}), codes.Unauthenticated, ""},
		{"member that does not exist", "6f1c1c3e-0000-4000-8000-000000000000", with(func(*app.APIKeyUpdate) {}), codes.Unauthenticated, ""},
		{"app of another project", member.ID, with(func(u *app.APIKeyUpdate) { u.AppID = sibling.ID }), codes.NotFound, ""},
		{"key of another app of the project", member.ID, with(func(u *app.APIKeyUpdate) { u.AppID = sameProjectApp.ID }), codes.NotFound, ""},
		{"key of another project's app", member.ID, with(func(u *app.APIKeyUpdate) { u.KeyID = siblingKey.ID }), codes.NotFound, ""},
		{"no field", member.ID, good, codes.InvalidArgument, "name"},
		{"empty name", member.ID, with(func(u *app.APIKeyUpdate) { u.Name = ptr("  ") }), codes.InvalidArgument, "name"},
		{"name of 129 characters", member.ID, with(func(u *app.APIKeyUpdate) { u.Name = ptr(strings.Repeat("n", 129)) }), codes.InvalidArgument, "name"},
		{"description of 1025 characters", member.ID, with(func(u *app.APIKeyUpdate) { u.Description = ptr(strings.Repeat("d", 1025)) }), codes.InvalidArgument, "description"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.UpdateAPIKey(ctx, tc.member, tc.in)
			wantStatus(t, tc.name, err, tc.wantCode)
			if tc.wantField != "" && fieldOf(err) != tc.wantField {
				t.Errorf("field = %q, want %q", fieldOf(err), tc.wantField)
			}
		})
	}
	if evs := f.drain(t); len(evs) != 0 {
		t.Fatalf("refused updates emitted %v", types(evs))
	}

	t.Run("name and description at their limits", func(t *testing.T) {
		f.now = f.now.Add(time.Minute)
		in := good
		in.Name, in.Description = ptr(strings.Repeat("n", 128)), ptr(strings.Repeat("d", 1024))
		got, err := f.svc.UpdateAPIKey(ctx, member.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != *in.Name || got.Description != *in.Description || got.Type != domain.KeyRead ||
			!got.CreatedAt.Equal(key.CreatedAt) || !got.UpdatedAt.Equal(f.now) {
			t.Errorf("key = %+v", got)
		}
		if evs := f.drain(t); len(evs) != 1 || evs[0].Type != identityv1.EventAPIKeyChanged {
			t.Errorf("events = %v", types(evs))
		}
	})

	t.Run("description alone keeps the name", func(t *testing.T) {
		in := good
		in.Description = ptr("")
		got, err := f.svc.UpdateAPIKey(ctx, member.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != strings.Repeat("n", 128) || got.Description != "" {
			t.Errorf("key = %+v", got)
		}
		f.drain(t)
	})

	t.Run("a disabled app is PermissionDenied", func(t *testing.T) {
		if _, err := f.svc.SetAppEnabled(ctx, f.app.ID, false); err != nil {
			t.Fatal(err)
		}
		f.drain(t)
		_, err := f.svc.UpdateAPIKey(ctx, member.ID, with(func(*app.APIKeyUpdate) {}))
		wantStatus(t, "disabled app", err, codes.PermissionDenied)
		if evs := f.drain(t); len(evs) != 0 {
			t.Errorf("events = %v", types(evs))
		}
	})
}
