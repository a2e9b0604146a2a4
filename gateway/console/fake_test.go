package console

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/gateway/webpage"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

const (
	projectID   = "5a1c8e0a-1111-4222-8333-944445555666"
	otherProj   = "6b2d9f1b-2222-4333-8444-a55556666777"
	testApp     = "4f1c8e0a-1111-4222-8333-944445555666"
	keyID       = "0b6c2a52-7d1e-4a55-9d0e-3f1f2c4b5a61"
	memberEmail = "owner@example.com"
	memberPass  = "a long enough passphrase 42"
	goodCode    = "123456"
	challenge   = "challenge-token"
)

// start is the fixed time the console runs at in the tests; each test moves its own clock.
var start = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// call is one request a fake received, with the bearer token it carried ("" for none).
type call struct {
	method string
	bearer string
	req    proto.Message
}

// fake answers the console's identity calls as programmed and records them. The methods the
// console never calls panic (nil embedded interfaces).
type fake struct {
	identityv1.MemberServiceClient
	identityv1.IdentityAdminServiceClient
	identityv1.OperatorServiceClient
	outboundv1.OutboundServiceClient    // fake_events_test.go
	webhookv1.WebhookAdminServiceClient // fake_events_test.go

	mu    sync.Mutex
	calls []call
	// secondFactor makes SignInMember ask for the second factor.
	secondFactor bool
	// factors answer ListMemberFactors (fake_passkeys_test.go); a passkey among them makes the
	// sign-in's second step offer one.
	factors []*identityv1.MemberFactor
	// tokens counts issued tokens, so each sign-in's token differs.
	tokens int
	errs   map[string]error
}

func newFake() *fake { return &fake{errs: map[string]error{}} }

func (f *fake) record(ctx context.Context, method string, req proto.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	bearer := ""
	if v := metadata.ValueFromOutgoingContext(ctx, "authorization"); len(v) == 1 {
		bearer = v[0]
	}
	f.calls = append(f.calls, call{method: method, bearer: bearer, req: req})
	return f.errs[method]
}

func (f *fake) received(method string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.method == method {
			out = append(out, c)
		}
	}
	return out
}

func (f *fake) profile() *identityv1.MemberProfile {
	return &identityv1.MemberProfile{MemberId: "m-1", ProjectId: projectID, Email: memberEmail, Name: "Owner",
		Projects: []*identityv1.Project{{Id: projectID, Name: "Shop"}, {Id: otherProj, Name: "Blog"}}}
}

func (f *fake) session() *identityv1.MemberSignIn {
	f.mu.Lock()
	f.tokens++
	n := f.tokens
	f.mu.Unlock()
	return &identityv1.MemberSignIn{Token: "operator-token-" + strconv.Itoa(n), ExpiresAt: start.Add(24 * time.Hour).Format(time.RFC3339), Member: f.profile()}
}

func (f *fake) SignInMember(ctx context.Context, in *identityv1.SignInMemberRequest, _ ...grpc.CallOption) (*identityv1.MemberSignIn, error) {
	if err := f.record(ctx, "SignInMember", in); err != nil {
		return nil, err
	}
	if f.secondFactor {
		return &identityv1.MemberSignIn{Challenge: challenge}, nil
	}
	return f.session(), nil
}

func (f *fake) VerifyMemberSecondFactor(ctx context.Context, in *identityv1.VerifyMemberSecondFactorRequest, _ ...grpc.CallOption) (*identityv1.MemberSignIn, error) {
	if err := f.record(ctx, "VerifyMemberSecondFactor", in); err != nil {
		return nil, err
	}
	return f.session(), nil
}

func (f *fake) DescribeInvitation(ctx context.Context, in *identityv1.InvitationToken, _ ...grpc.CallOption) (*identityv1.Invitation, error) {
	if err := f.record(ctx, "DescribeInvitation", in); err != nil {
		return nil, err
	}
	return &identityv1.Invitation{Email: "new@example.com", ProjectId: projectID, ProjectName: "Shop"}, nil
}

func (f *fake) AcceptInvitation(ctx context.Context, in *identityv1.AcceptInvitationRequest, _ ...grpc.CallOption) (*identityv1.MemberSignIn, error) {
	if err := f.record(ctx, "AcceptInvitation", in); err != nil {
		return nil, err
	}
	return f.session(), nil
}

func (f *fake) DescribeMember(ctx context.Context, in *emptypb.Empty, _ ...grpc.CallOption) (*identityv1.MemberProfile, error) {
	if err := f.record(ctx, "DescribeMember", in); err != nil {
		return nil, err
	}
	return f.profile(), nil
}

func (f *fake) SwitchProject(ctx context.Context, in *identityv1.SwitchProjectRequest, _ ...grpc.CallOption) (*identityv1.MemberSignIn, error) {
	if err := f.record(ctx, "SwitchProject", in); err != nil {
		return nil, err
	}
	return f.session(), nil
}

func (f *fake) SignOutMember(ctx context.Context, in *emptypb.Empty, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := f.record(ctx, "SignOutMember", in); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

func (f *fake) StartMemberTotp(ctx context.Context, in *emptypb.Empty, _ ...grpc.CallOption) (*identityv1.TotpKey, error) {
	if err := f.record(ctx, "StartMemberTotp", in); err != nil {
		return nil, err
	}
	return &identityv1.TotpKey{OtpauthUrl: "otpauth://totp/Berth:owner@example.com?secret=JBSWY3DPEHPK3PXP", Secret: "JBSWY3DPEHPK3PXP"}, nil
}

func (f *fake) ConfirmMemberTotp(ctx context.Context, in *identityv1.ConfirmMemberTotpRequest, _ ...grpc.CallOption) (*identityv1.RecoveryCodes, error) {
	if err := f.record(ctx, "ConfirmMemberTotp", in); err != nil {
		return nil, err
	}
	return &identityv1.RecoveryCodes{Codes: []string{"aaaa-bbbb", "cccc-dddd"}}, nil
}

func (f *fake) InviteMember(ctx context.Context, in *identityv1.InviteMemberRequest, _ ...grpc.CallOption) (*identityv1.ProjectMember, error) {
	if err := f.record(ctx, "InviteMember", in); err != nil {
		return nil, err
	}
	return &identityv1.ProjectMember{Id: "m-2", ProjectId: in.GetProjectId(), Email: in.GetEmail()}, nil
}

func (f *fake) ListProjectMembers(ctx context.Context, in *identityv1.ListProjectMembersRequest, _ ...grpc.CallOption) (*identityv1.ProjectMemberList, error) {
	if err := f.record(ctx, "ListProjectMembers", in); err != nil {
		return nil, err
	}
	return &identityv1.ProjectMemberList{Items: []*identityv1.ProjectMemberItem{{Member: &identityv1.ProjectMember{Email: memberEmail, Name: "Owner"}, Accepted: true}}}, nil
}

func (f *fake) app() *identityv1.App {
	return &identityv1.App{Id: testApp, ProjectId: projectID, Name: "Demo <App>", Enabled: true, EmailVerification: "optional", Mfa: "off",
		RedirectUris: []string{"https://app.example/callback"}}
}

func (f *fake) ListProjectApps(ctx context.Context, in *identityv1.ListProjectAppsRequest, _ ...grpc.CallOption) (*identityv1.AppList, error) {
	if err := f.record(ctx, "ListProjectApps", in); err != nil {
		return nil, err
	}
	return &identityv1.AppList{Items: []*identityv1.App{f.app()}}, nil
}

func (f *fake) GetApp(ctx context.Context, in *identityv1.GetAppRequest, _ ...grpc.CallOption) (*identityv1.App, error) {
	if err := f.record(ctx, "GetApp", in); err != nil {
		return nil, err
	}
	return f.app(), nil
}

func (f *fake) ListAppApiKeys(ctx context.Context, in *identityv1.GetAppRequest, _ ...grpc.CallOption) (*identityv1.ApiKeyList, error) {
	if err := f.record(ctx, "ListAppApiKeys", in); err != nil {
		return nil, err
	}
	return &identityv1.ApiKeyList{Items: []*identityv1.ApiKey{{Uuid: keyID, Name: "backend", Type: "write", CreatedAt: "2026-11-01T08:00:00Z"}}}, nil
}

func (f *fake) RevokeApiKey(ctx context.Context, in *identityv1.RevokeApiKeyRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := f.record(ctx, "RevokeApiKey", in); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

func (f *fake) CreateApiKey(ctx context.Context, in *identityv1.CreateApiKeyRequest, _ ...grpc.CallOption) (*identityv1.CreatedApiKey, error) {
	if err := f.record(ctx, "CreateApiKey", in); err != nil {
		return nil, err
	}
	return &identityv1.CreatedApiKey{Key: &identityv1.ApiKey{Uuid: keyID, Name: in.GetName(), Type: in.GetType()}, Secret: "sk_secret_shown_once", AppId: in.GetAppId()}, nil
}

func (f *fake) UpdateApiKey(ctx context.Context, in *identityv1.UpdateApiKeyRequest, _ ...grpc.CallOption) (*identityv1.ApiKeyList, error) {
	if err := f.record(ctx, "UpdateApiKey", in); err != nil {
		return nil, err
	}
	return &identityv1.ApiKeyList{}, nil
}

func (f *fake) ListAppOrigins(ctx context.Context, in *identityv1.ListAppOriginsRequest, _ ...grpc.CallOption) (*identityv1.AppOrigins, error) {
	if err := f.record(ctx, "ListAppOrigins", in); err != nil {
		return nil, err
	}
	return &identityv1.AppOrigins{AppId: in.GetAppId(), RedirectUriOrigins: []string{"https://app.example"}}, nil
}

func (f *fake) ListAppIdentityProviders(ctx context.Context, in *identityv1.ListAppIdentityProvidersRequest, _ ...grpc.CallOption) (*identityv1.AppIdentityProviders, error) {
	if err := f.record(ctx, "ListAppIdentityProviders", in); err != nil {
		return nil, err
	}
	return &identityv1.AppIdentityProviders{Items: []*identityv1.IdentityProvider{{Slot: "idpA", DisplayName: "Provider A", ClientId: "client-a", HasClientSecret: true}}}, nil
}

func (f *fake) SetAppIdentityProvider(ctx context.Context, in *identityv1.SetAppIdentityProviderRequest, _ ...grpc.CallOption) (*identityv1.AppIdentityProviders, error) {
	if err := f.record(ctx, "SetAppIdentityProvider", in); err != nil {
		return nil, err
	}
	return &identityv1.AppIdentityProviders{AppId: in.GetAppId(), Items: []*identityv1.IdentityProvider{in.GetProvider()}}, nil
}

func (f *fake) SetAppRedirectUris(ctx context.Context, in *identityv1.SetAppRedirectUrisRequest, _ ...grpc.CallOption) (*identityv1.App, error) {
	if err := f.record(ctx, "SetAppRedirectUris", in); err != nil {
		return nil, err
	}
	return &identityv1.App{Id: in.GetAppId(), RedirectUris: in.GetRedirectUris()}, nil
}

func (f *fake) SetAppTokenLifetimes(ctx context.Context, in *identityv1.SetAppTokenLifetimesRequest, _ ...grpc.CallOption) (*identityv1.App, error) {
	if err := f.record(ctx, "SetAppTokenLifetimes", in); err != nil {
		return nil, err
	}
	return &identityv1.App{Id: in.GetAppId(), AccessTokenTtlSeconds: in.GetAccessTokenTtlSeconds(), RefreshTokenTtlSeconds: in.GetRefreshTokenTtlSeconds()}, nil
}

func (f *fake) RotateAppKey(ctx context.Context, in *identityv1.RotateAppKeyRequest, _ ...grpc.CallOption) (*identityv1.App, error) {
	if err := f.record(ctx, "RotateAppKey", in); err != nil {
		return nil, err
	}
	return f.app(), nil
}

func (f *fake) SetAppMfa(ctx context.Context, in *identityv1.SetAppMfaRequest, _ ...grpc.CallOption) (*identityv1.App, error) {
	if err := f.record(ctx, "SetAppMfa", in); err != nil {
		return nil, err
	}
	return f.app(), nil
}

// testKey seals the tests' sessions.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// newConsole is a console over f whose clock the test sets; more backends (another area's
// fakes) may be set by with.
func newConsole(t *testing.T, f *fake, with ...func(*Backends)) (*Console, *time.Time) {
	t.Helper()
	b := Backends{Service: f, Members: f, Admin: f, Operator: f, Outbound: f, Webhooks: f}
	for _, w := range with {
		w(&b)
	}
	c, err := New(b, testKey, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := start
	c.sessions.now = func() time.Time { return now }
	return c, &now
}

// browser carries cookies between requests the way a browser on host would.
type browser struct {
	t       *testing.T
	c       *Console
	host    string
	cookies map[string]*http.Cookie
}

func newBrowser(t *testing.T, c *Console) *browser {
	return &browser{t: t, c: c, host: "console.example", cookies: map[string]*http.Cookie{}}
}

func (b *browser) do(method, target string, form url.Values) *httptest.ResponseRecorder {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, "http://"+b.host+target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, k := range b.cookies {
		r.AddCookie(k)
	}
	rec := httptest.NewRecorder()
	b.c.ServeHTTP(rec, r)
	for _, k := range rec.Result().Cookies() {
		if k.MaxAge < 0 {
			delete(b.cookies, k.Name)
		} else {
			b.cookies[k.Name] = k
		}
	}
	return rec
}

func (b *browser) get(target string) *httptest.ResponseRecorder {
	return b.do(http.MethodGet, target, nil)
}

// post sends form with the CSRF token the browser's cookie holds (fetching a page first for one).
func (b *browser) post(target string, form url.Values) *httptest.ResponseRecorder {
	b.t.Helper()
	if b.cookies["berth_console_csrf"] == nil {
		b.get(SignInPath)
	}
	form.Set(webpage.CSRFField, b.cookies["berth_console_csrf"].Value)
	return b.do(http.MethodPost, target, form)
}

// signIn signs the browser in with the member's address and password.
func (b *browser) signIn() {
	b.t.Helper()
	rec := b.post(SignInPath, url.Values{"email": {memberEmail}, "password": {memberPass}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != Path {
		b.t.Fatalf("sign in = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
}
