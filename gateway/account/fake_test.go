package account

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

const (
	appID     = "4f1c8e0a-1111-4222-8333-944445555666"
	callback  = "https://berth.example/account/callback"
	sessionID = "0b6c2a52-7d1e-4a55-9d0e-3f1f2c4b5a61"
	otherID   = "7e3f0a11-2b4c-4d5e-8f60-718293a4b5c6"
	userEmail = "ada@example.com"
)

// now is the fixed time the page runs at in the tests.
var now = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// accessToken is a JWT-shaped token naming session sid, as identity issues them.
func accessToken(sid string) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"u","sid":"` + sid + `"}`))
	return "eyJhbGciOiJSUzI1NiJ9." + payload + ".c2ln"
}

// call is one request a fake received, with the bearer token it carried ("" for none).
type call struct {
	method string
	bearer string
	req    proto.Message
}

// fakeIdentity answers the page's identity calls as programmed and records them. It implements
// the three clients the page uses; the methods the page never calls panic (nil embedded).
type fakeIdentity struct {
	identityv1.LoginServiceClient
	identityv1.TokenServiceClient
	identityv1.IdentityServiceClient

	mu       sync.Mutex
	calls    []call
	branding *identityv1.AppBranding
	verified bool
	// mfa is the user's second-factor state DescribeSecondFactors answers.
	mfa *identityv1.SecondFactors
	// methods are the sign-in methods DescribeSignInMethods answers.
	methods *identityv1.SignInMethods
	// errs answer the named method with an error instead.
	errs map[string]error
}

func newFake() *fakeIdentity {
	return &fakeIdentity{errs: map[string]error{}, mfa: &identityv1.SecondFactors{Policy: "optional"},
		methods: &identityv1.SignInMethods{HasPassword: true}}
}

func (f *fakeIdentity) record(ctx context.Context, method string, req proto.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	bearer := ""
	if v := metadata.ValueFromOutgoingContext(ctx, "authorization"); len(v) == 1 {
		bearer = v[0]
	}
	f.calls = append(f.calls, call{method: method, bearer: bearer, req: req})
	return f.errs[method]
}

// received are the calls of method.
func (f *fakeIdentity) received(method string) []call {
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

func (f *fakeIdentity) all() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

func (f *fakeIdentity) DescribeAccount(ctx context.Context, in *identityv1.DescribeAccountRequest, _ ...grpc.CallOption) (*identityv1.LoginContext, error) {
	if err := f.record(ctx, "DescribeAccount", in); err != nil {
		return nil, err
	}
	return &identityv1.LoginContext{AppId: in.GetClientId(), AppName: "Demo App", Branding: f.branding, AccountCallbackUri: callback}, nil
}

func (f *fakeIdentity) ChangePassword(ctx context.Context, in *identityv1.ChangePasswordRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := f.record(ctx, "ChangePassword", in); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

func (f *fakeIdentity) ResendVerification(ctx context.Context, in *identityv1.ResendVerificationRequest, _ ...grpc.CallOption) (*identityv1.LoginRedirect, error) {
	if err := f.record(ctx, "ResendVerification", in); err != nil {
		return nil, err
	}
	return &identityv1.LoginRedirect{Verification: otherID}, nil
}

func (f *fakeIdentity) ExchangeToken(ctx context.Context, in *identityv1.ExchangeTokenRequest, _ ...grpc.CallOption) (*identityv1.TokenList, error) {
	if err := f.record(ctx, "ExchangeToken", in); err != nil {
		return nil, err
	}
	exp := now.Add(15 * time.Minute).UnixMilli()
	return &identityv1.TokenList{Kind: "tokens", TotalItems: 1, ItemsLength: 1, Items: []*identityv1.Token{{
		AccessToken: accessToken(sessionID), RefreshToken: "refresh", ExpiresIn: strconv.FormatInt(exp, 10), TokenType: "Bearer",
	}}}, nil
}

func (f *fakeIdentity) GetMe(ctx context.Context, in *identityv1.GetMeRequest, _ ...grpc.CallOption) (*identityv1.User, error) {
	if err := f.record(ctx, "GetMe", in); err != nil {
		return nil, err
	}
	return &identityv1.User{Id: "user-1", AppId: appID, Email: userEmail, EmailVerified: f.verified}, nil
}

func (f *fakeIdentity) ListSessions(ctx context.Context, in *identityv1.ListSessionsRequest, _ ...grpc.CallOption) (*identityv1.SessionList, error) {
	if err := f.record(ctx, "ListSessions", in); err != nil {
		return nil, err
	}
	return &identityv1.SessionList{Kind: "session", ItemsLength: 1, Items: []*identityv1.Session{{
		Id: otherID, CreatedAt: "2026-11-20T08:30:00Z", LastUsedAt: "2026-11-27T11:00:00Z", ClientIp: "198.51.100.4",
		UserAgent: "Firefox on the phone", AppId: appID,
	}}}, nil
}

func (f *fakeIdentity) RevokeSession(ctx context.Context, in *identityv1.RevokeSessionRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := f.record(ctx, "RevokeSession", in); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

func (f *fakeIdentity) RevokeSessions(ctx context.Context, in *identityv1.RevokeSessionsRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := f.record(ctx, "RevokeSessions", in); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

func (f *fakeIdentity) DescribeSecondFactors(ctx context.Context, in *identityv1.AccountRequest, _ ...grpc.CallOption) (*identityv1.SecondFactors, error) {
	if err := f.record(ctx, "DescribeSecondFactors", in); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return proto.CloneOf(f.mfa), nil
}

// The key the fake enrols, and the one code that confirms it.
const (
	totpURL    = "otpauth://totp/Demo%20App:ada@example.com?issuer=Demo%20App&secret=JBSWY3DPEHPK3PXP"
	totpSecret = "JBSWY3DPEHPK3PXP"
	goodCode   = "123456"
	// userPassword is the password the fake takes to confirm a new second factor.
	userPassword = "my password"
)

func (f *fakeIdentity) StartTotpEnrolment(ctx context.Context, in *identityv1.AccountRequest, _ ...grpc.CallOption) (*identityv1.TotpKey, error) {
	if err := f.record(ctx, "StartTotpEnrolment", in); err != nil {
		return nil, err
	}
	return &identityv1.TotpKey{OtpauthUrl: totpURL, Secret: totpSecret}, nil
}

func (f *fakeIdentity) ConfirmTotpEnrolment(ctx context.Context, in *identityv1.ConfirmTotpEnrolmentRequest, _ ...grpc.CallOption) (*identityv1.RecoveryCodes, error) {
	if err := f.record(ctx, "ConfirmTotpEnrolment", in); err != nil {
		return nil, err
	}
	if in.GetCurrentPassword() != userPassword {
		return nil, grpcx.StatusOf(fault.Invalid("current_password", "wrong")).Err()
	}
	if in.GetCode() != goodCode {
		return nil, grpcx.StatusOf(fault.Invalid("code", "wrong")).Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mfa.Totp, f.mfa.RecoveryCodesLeft = true, 10
	return &identityv1.RecoveryCodes{Codes: []string{"abcde-fghjk", "mnpqr-stuvw"}}, nil
}

func (f *fakeIdentity) RegenerateRecoveryCodes(ctx context.Context, in *identityv1.AccountRequest, _ ...grpc.CallOption) (*identityv1.RecoveryCodes, error) {
	if err := f.record(ctx, "RegenerateRecoveryCodes", in); err != nil {
		return nil, err
	}
	return &identityv1.RecoveryCodes{Codes: []string{"xyzab-cdefg"}}, nil
}

func (f *fakeIdentity) StartPasskeyRegistration(ctx context.Context, in *identityv1.AccountRequest, _ ...grpc.CallOption) (*identityv1.PasskeyCeremony, error) {
	if err := f.record(ctx, "StartPasskeyRegistration", in); err != nil {
		return nil, err
	}
	return &identityv1.PasskeyCeremony{Options: `{"challenge":"Y2hhbGxlbmdl"}`, State: "sealed-state"}, nil
}

// FinishPasskeyRegistration answers recovery codes for the first factor of the fake's user.
func (f *fakeIdentity) FinishPasskeyRegistration(ctx context.Context, in *identityv1.FinishPasskeyRegistrationRequest, _ ...grpc.CallOption) (*identityv1.RecoveryCodes, error) {
	if err := f.record(ctx, "FinishPasskeyRegistration", in); err != nil {
		return nil, err
	}
	if in.GetCurrentPassword() != userPassword {
		return nil, grpcx.StatusOf(fault.Invalid("current_password", "wrong")).Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	first := !f.mfa.GetTotp() && f.mfa.GetPasskeys() == 0
	f.mfa.Passkeys++
	if first {
		f.mfa.RecoveryCodesLeft = 10
		return &identityv1.RecoveryCodes{Codes: []string{"abcde-fghjk"}}, nil
	}
	return &identityv1.RecoveryCodes{}, nil
}

func (f *fakeIdentity) DescribeSignInMethods(ctx context.Context, in *identityv1.AccountRequest, _ ...grpc.CallOption) (*identityv1.SignInMethods, error) {
	if err := f.record(ctx, "DescribeSignInMethods", in); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return proto.CloneOf(f.methods), nil
}

// providerURL is where the fake's link flows send the browser.
const providerURL = "https://idp.example/authorize?state=s"

func (f *fakeIdentity) StartProviderLink(ctx context.Context, in *identityv1.StartProviderLinkRequest, _ ...grpc.CallOption) (*identityv1.ProviderRedirect, error) {
	if err := f.record(ctx, "StartProviderLink", in); err != nil {
		return nil, err
	}
	return &identityv1.ProviderRedirect{Url: providerURL, Flow: "sealed-flow"}, nil
}

func (f *fakeIdentity) UnlinkProvider(ctx context.Context, in *identityv1.UnlinkProviderRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := f.record(ctx, "UnlinkProvider", in); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

func (f *fakeIdentity) RemoveSecondFactor(ctx context.Context, in *identityv1.RemoveSecondFactorRequest, _ ...grpc.CallOption) (*emptypb.Empty, error) {
	if err := f.record(ctx, "RemoveSecondFactor", in); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// newPage is the page over fake, at the tests' fixed time, and the buffer its log goes to.
func newPage(fake *fakeIdentity) (*Page, *bytes.Buffer) {
	logs := &bytes.Buffer{}
	p := New(fake, fake, fake, slog.New(slog.NewJSONHandler(logs, nil)), nil)
	p.now = func() time.Time { return now }
	return p, logs
}
