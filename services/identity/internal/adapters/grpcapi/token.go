package grpcapi

import (
	"context"
	"strconv"

	"github.com/pquerna/otp"
	"google.golang.org/protobuf/types/known/emptypb"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// kindTokens is the kind of route 1's collection.
const kindTokens = "tokens"

// TokenServer implements the public token exchange, discovery and JWKS.
type TokenServer struct {
	identityv1.UnimplementedTokenServiceServer
	svc *app.Service
}

// ExchangeToken is route 1.
func (s *TokenServer) ExchangeToken(ctx context.Context, req *identityv1.ExchangeTokenRequest) (*identityv1.TokenList, error) {
	t, err := s.svc.ExchangeToken(ctx, app.TokenRequest{
		ClientID: req.GetClientId(), GrantType: req.GetGrantType(), RedirectURI: req.GetRedirectUri(),
		Code: req.GetCode(), Nonce: req.GetNonce(), Scope: req.GetScope(), RefreshToken: req.GetRefreshToken(),
		Service: req.GetService(),
	})
	if err != nil {
		return nil, err
	}
	item := &identityv1.Token{
		AccessToken: t.AccessToken, IdToken: t.IDToken, RefreshToken: t.RefreshToken, TokenType: "Bearer",
		// expiresIn is the access token's expiry as Unix milliseconds, as text (what the SDKs read).
		ExpiresIn:   strconv.FormatInt(t.ExpiresAt.UnixMilli(), 10),
		RedirectUri: t.RedirectURI,
	}
	return &identityv1.TokenList{Kind: kindTokens, TotalItems: 1, ItemsLength: 1, Items: []*identityv1.Token{item}}, nil
}

// GetOpenIDConfiguration serves an app's discovery document.
func (s *TokenServer) GetOpenIDConfiguration(ctx context.Context, req *identityv1.GetOpenIDConfigurationRequest) (*identityv1.OpenIDConfiguration, error) {
	d, err := s.svc.OpenIDConfiguration(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return &identityv1.OpenIDConfiguration{
		Issuer: d.Issuer, AuthorizationEndpoint: d.AuthorizationEndpoint, TokenEndpoint: d.TokenEndpoint,
		JwksUri: d.JWKSURI, ResponseTypesSupported: d.ResponseTypes, SubjectTypesSupported: d.SubjectTypes,
		IdTokenSigningAlgValuesSupported: d.SigningAlgs, GrantTypesSupported: d.GrantTypes,
		ScopesSupported: d.Scopes, ClaimsSupported: d.Claims,
	}, nil
}

// GetJWKS serves an app's current signing key.
func (s *TokenServer) GetJWKS(ctx context.Context, req *identityv1.GetJWKSRequest) (*identityv1.JWKS, error) {
	k, err := s.svc.JWKS(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return &identityv1.JWKS{Keys: []*identityv1.JWK{{Kty: k.Kty, Use: k.Use, Alg: k.Alg, Kid: k.Kid, N: k.N, E: k.E}}}, nil
}

// LoginServer backs the edge's hosted login page.
type LoginServer struct {
	identityv1.UnimplementedLoginServiceServer
	svc *app.Service
}

// DescribeLogin checks an authorization request before the page shows its form.
func (s *LoginServer) DescribeLogin(ctx context.Context, req *identityv1.DescribeLoginRequest) (*identityv1.LoginContext, error) {
	a, err := s.svc.DescribeLogin(ctx, req.GetClientId(), req.GetRedirectUri())
	out, err := loginContext(a, err)
	if err != nil {
		return nil, err
	}
	out.PasskeySignIn = s.svc.OffersPasskeySignIn(a)
	idps, err := s.svc.LoginProviders(ctx, out.GetAppId())
	if err != nil {
		return nil, err
	}
	for _, p := range idps {
		out.Providers = append(out.Providers, &identityv1.LoginProvider{Slot: p.Slot, DisplayName: p.DisplayName})
	}
	return out, nil
}

// StartProviderSignIn begins a sign-in through one of the app's identity providers.
func (s *LoginServer) StartProviderSignIn(ctx context.Context, req *identityv1.StartProviderSignInRequest) (*identityv1.ProviderRedirect, error) {
	start, err := s.svc.StartProviderSignIn(ctx, loginParams(req.GetParams()), req.GetSlot())
	if err != nil {
		return nil, err
	}
	return &identityv1.ProviderRedirect{Url: start.URL, Flow: start.Flow}, nil
}

// FinishProviderSignIn takes the provider's callback.
func (s *LoginServer) FinishProviderSignIn(ctx context.Context, req *identityv1.FinishProviderSignInRequest) (*identityv1.ProviderOutcome, error) {
	o, err := s.svc.FinishProviderSignIn(ctx, app.ProviderCallback{
		Flow: req.GetFlow(), State: req.GetState(), Code: req.GetCode(), Error: req.GetError(), ErrorDescription: req.GetErrorDescription(),
		ClientIP: req.GetClientIp(), UserAgent: req.GetUserAgent(),
	})
	if err != nil {
		return nil, err
	}
	out := &identityv1.ProviderOutcome{Url: o.URL, Link: o.Link, Email: o.Email, ProviderName: o.ProviderName, SecondFactor: o.SecondFactor, Enrol: o.Enrol}
	if o.Link != "" || o.SecondFactor != "" {
		out.Params = loginParamsProto(o.Params)
	}
	return out, nil
}

// loginParamsProto is the inverse of loginParams.
func loginParamsProto(p app.LoginParams) *identityv1.LoginParams {
	return &identityv1.LoginParams{ClientId: p.ClientID, RedirectUri: p.RedirectURI, State: p.State, Nonce: p.Nonce, Scope: p.Scope, Referral: p.Referral}
}

// ConfirmProviderLink links a provider identity to the account the person proved is theirs.
func (s *LoginServer) ConfirmProviderLink(ctx context.Context, req *identityv1.ConfirmProviderLinkRequest) (*identityv1.LoginRedirect, error) {
	return loginRedirect(s.svc.ConfirmProviderLink(ctx, app.ConfirmLinkInput{
		Link: req.GetLink(), Password: req.GetPassword(), Code: req.GetCode(), EmailCode: req.GetEmailCode(),
		Passkey: req.GetPasskey(), PasskeyState: req.GetPasskeyState(), ClientIP: req.GetClientIp(), UserAgent: req.GetUserAgent(),
	}))
}

// DescribeProviderLink answers the confirmation page of a pending link.
func (s *LoginServer) DescribeProviderLink(ctx context.Context, req *identityv1.ProviderLinkRef) (*identityv1.ProviderLinkProofs, error) {
	p, err := s.svc.DescribeProviderLink(ctx, req.GetLink())
	if err != nil {
		return nil, err
	}
	out := &identityv1.ProviderLinkProofs{Email: p.Email, ProviderName: p.ProviderName, Params: loginParamsProto(p.Params),
		Password: p.Password, Totp: p.TOTP, CodeSent: p.CodeSent}
	if p.Passkey.Options != "" {
		out.Passkey = &identityv1.PasskeyCeremony{Options: p.Passkey.Options, State: p.Passkey.State}
	}
	return out, nil
}

// SendProviderLinkCode mails the code that confirms a pending link.
func (s *LoginServer) SendProviderLinkCode(ctx context.Context, req *identityv1.SendProviderLinkCodeRequest) (*identityv1.ProviderLinkRef, error) {
	link, err := s.svc.SendProviderLinkCode(ctx, req.GetLink(), req.GetClientIp())
	if err != nil {
		return nil, err
	}
	return &identityv1.ProviderLinkRef{Link: link}, nil
}

// SignUp creates the user and its tenant, then signs in or asks for verification.
func (s *LoginServer) SignUp(ctx context.Context, req *identityv1.SignUpRequest) (*identityv1.LoginRedirect, error) {
	return loginRedirect(s.svc.SignUp(ctx, app.SignUpInput{
		Params: loginParams(req.GetParams()), Email: req.GetEmail(), Password: req.GetPassword(),
		Name: req.GetName(), ClientIP: req.GetClientIp(), UserAgent: req.GetUserAgent(),
	}))
}

// SignIn checks the password and issues an authorization code, or asks for verification.
func (s *LoginServer) SignIn(ctx context.Context, req *identityv1.SignInRequest) (*identityv1.LoginRedirect, error) {
	return loginRedirect(s.svc.SignIn(ctx, app.SignInInput{
		Params: loginParams(req.GetParams()), Email: req.GetEmail(), Password: req.GetPassword(), ClientIP: req.GetClientIp(),
		UserAgent: req.GetUserAgent(),
	}))
}

// ResendVerification mails a fresh verification to an unverified user of the address.
func (s *LoginServer) ResendVerification(ctx context.Context, req *identityv1.ResendVerificationRequest) (*identityv1.LoginRedirect, error) {
	return loginRedirect(s.svc.ResendVerification(ctx, app.ResendInput{
		Params: loginParams(req.GetParams()), Email: req.GetEmail(), ClientIP: req.GetClientIp(),
	}))
}

// VerifyEmailCode meets a verification by its code.
func (s *LoginServer) VerifyEmailCode(ctx context.Context, req *identityv1.VerifyEmailCodeRequest) (*identityv1.VerifiedEmail, error) {
	url, err := s.svc.VerifyEmailCode(ctx, app.CodeInput{
		ClientID: req.GetClientId(), Verification: req.GetVerification(), Code: req.GetCode(), ClientIP: req.GetClientIp(),
	})
	if err != nil {
		return nil, err
	}
	return &identityv1.VerifiedEmail{Url: url}, nil
}

// VerifyEmailLink meets a verification by its link's secret.
func (s *LoginServer) VerifyEmailLink(ctx context.Context, req *identityv1.VerifyEmailLinkRequest) (*identityv1.VerifiedEmail, error) {
	url, err := s.svc.VerifyEmailLink(ctx, req.GetToken(), req.GetClientIp())
	if err != nil {
		return nil, err
	}
	return &identityv1.VerifiedEmail{Url: url}, nil
}

// DescribeVerification answers the app of a live verification link.
func (s *LoginServer) DescribeVerification(ctx context.Context, req *identityv1.VerifyEmailLinkRequest) (*identityv1.LoginContext, error) {
	return loginContext(s.svc.DescribeVerification(ctx, req.GetToken()))
}

// DescribeApp answers the name and branding of a known app.
func (s *LoginServer) DescribeApp(ctx context.Context, req *identityv1.DescribeAccountRequest) (*identityv1.LoginContext, error) {
	return loginContext(s.svc.DescribeApp(ctx, req.GetClientId()))
}

// loginContext is what a hosted page learns of an app: its id, name and branding.
func loginContext(a domain.App, err error) (*identityv1.LoginContext, error) {
	if err != nil {
		return nil, err
	}
	return &identityv1.LoginContext{AppId: a.ID, AppName: a.Name, Branding: convert.Branding(a.Branding)}, nil
}

func loginRedirect(o app.LoginOutcome, err error) (*identityv1.LoginRedirect, error) {
	if err != nil {
		return nil, err
	}
	return &identityv1.LoginRedirect{Url: o.URL, Verification: o.Verification, SecondFactor: o.SecondFactor, Enrol: o.Enrol, RecoveryCodes: o.RecoveryCodes}, nil
}

// DescribeAccount checks the account page's app and answers the deployment's account callback.
func (s *LoginServer) DescribeAccount(ctx context.Context, req *identityv1.DescribeAccountRequest) (*identityv1.LoginContext, error) {
	a, err := s.svc.DescribeAccount(ctx, req.GetClientId())
	if err != nil {
		return nil, err
	}
	return &identityv1.LoginContext{
		AppId: a.ID, AppName: a.Name, Branding: convert.Branding(a.Branding), AccountCallbackUri: s.svc.AccountCallbackURI(),
	}, nil
}

// ChangePassword is the account page's password change for the user of the access token.
func (s *LoginServer) ChangePassword(ctx context.Context, req *identityv1.ChangePasswordRequest) (*emptypb.Empty, error) {
	if err := s.svc.ChangePassword(ctx, app.PasswordChange{
		AccessToken: req.GetAccessToken(), Current: req.GetCurrentPassword(), New: req.GetNewPassword(), ClientIP: req.GetClientIp(),
	}); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// DescribeEmailChange checks an email-change confirmation link for the hosted page's GET.
func (s *LoginServer) DescribeEmailChange(ctx context.Context, req *identityv1.EmailChangeLink) (*identityv1.EmailChangeContext, error) {
	c, err := s.svc.DescribeEmailChange(ctx, req.GetToken())
	if err != nil {
		return nil, err
	}
	return emailChangeContext(c), nil
}

// ConfirmEmailChange uses an email-change confirmation link for the hosted page's POST.
func (s *LoginServer) ConfirmEmailChange(ctx context.Context, req *identityv1.EmailChangeLink) (*identityv1.EmailChangeContext, error) {
	c, err := s.svc.ConfirmEmailChange(ctx, req.GetToken())
	if err != nil {
		return nil, err
	}
	return emailChangeContext(c), nil
}

// emailChangeContext is what the confirmation page is told: the app, its branding and the address.
func emailChangeContext(c app.EmailChange) *identityv1.EmailChangeContext {
	return &identityv1.EmailChangeContext{AppName: c.App.Name, Email: c.Email, Branding: convert.Branding(c.App.Branding)}
}

// StartPasswordReset mails a reset link and code when the address has an active user; every
// address gets the same answer.
func (s *LoginServer) StartPasswordReset(ctx context.Context, req *identityv1.StartPasswordResetRequest) (*identityv1.PasswordResetFlow, error) {
	flow, err := s.svc.StartPasswordReset(ctx, app.ResetStart{
		Params: loginParams(req.GetParams()), Email: req.GetEmail(), ClientIP: req.GetClientIp(),
	})
	if err != nil {
		return nil, err
	}
	return &identityv1.PasswordResetFlow{FlowId: flow}, nil
}

// CheckPasswordReset checks a reset link or code before the page asks for the new password.
func (s *LoginServer) CheckPasswordReset(ctx context.Context, req *identityv1.CheckPasswordResetRequest) (*identityv1.PasswordResetContext, error) {
	rc, err := s.svc.CheckPasswordReset(ctx, resetProof(req.GetProof()))
	if err != nil {
		return nil, err
	}
	return &identityv1.PasswordResetContext{AppName: rc.AppName, RedirectUri: rc.RedirectURI, Branding: convert.Branding(rc.Branding)}, nil
}

// CompletePasswordReset sets the new password and continues the authorization request.
func (s *LoginServer) CompletePasswordReset(ctx context.Context, req *identityv1.CompletePasswordResetRequest) (*identityv1.LoginRedirect, error) {
	url, err := s.svc.CompletePasswordReset(ctx, app.ResetCompletion{
		Proof: resetProof(req.GetProof()), Password: req.GetPassword(), ClientIP: req.GetClientIp(), UserAgent: req.GetUserAgent(),
	})
	if err != nil {
		return nil, err
	}
	return &identityv1.LoginRedirect{Url: url}, nil
}

func resetProof(p *identityv1.PasswordResetProof) app.ResetProof {
	return app.ResetProof{Link: p.GetLink(), ClientID: p.GetClientId(), FlowID: p.GetFlowId(), Code: p.GetCode()}
}

func loginParams(p *identityv1.LoginParams) app.LoginParams {
	return app.LoginParams{
		ClientID: p.GetClientId(), RedirectURI: p.GetRedirectUri(), State: p.GetState(), Nonce: p.GetNonce(), Scope: p.GetScope(),
		Referral: p.GetReferral(),
	}
}

// DescribeSecondFactors answers the policy and factors of the access token's user.
func (s *LoginServer) DescribeSecondFactors(ctx context.Context, req *identityv1.AccountRequest) (*identityv1.SecondFactors, error) {
	st, err := s.svc.DescribeSecondFactors(ctx, req.GetAccessToken())
	if err != nil {
		return nil, err
	}
	return &identityv1.SecondFactors{Policy: string(st.Policy), Totp: st.TOTP, RecoveryCodesLeft: int32(st.RecoveryCodesLeft), Passkeys: int32(st.Passkeys)}, nil
}

// StartTotpEnrolment starts or resumes the TOTP enrolment of the access token's user.
func (s *LoginServer) StartTotpEnrolment(ctx context.Context, req *identityv1.AccountRequest) (*identityv1.TotpKey, error) {
	return totpKey(s.svc.StartTOTPEnrolment(ctx, req.GetAccessToken()))
}

// ConfirmTotpEnrolment confirms the enrolment with its first code.
func (s *LoginServer) ConfirmTotpEnrolment(ctx context.Context, req *identityv1.ConfirmTotpEnrolmentRequest) (*identityv1.RecoveryCodes, error) {
	codes, err := s.svc.ConfirmTOTPEnrolment(ctx, req.GetAccessToken(), req.GetCode(), req.GetCurrentPassword(), req.GetClientIp())
	if err != nil {
		return nil, err
	}
	return &identityv1.RecoveryCodes{Codes: codes}, nil
}

// RegenerateRecoveryCodes replaces the recovery codes of the access token's user.
func (s *LoginServer) RegenerateRecoveryCodes(ctx context.Context, req *identityv1.AccountRequest) (*identityv1.RecoveryCodes, error) {
	codes, err := s.svc.RegenerateRecoveryCodes(ctx, req.GetAccessToken())
	if err != nil {
		return nil, err
	}
	return &identityv1.RecoveryCodes{Codes: codes}, nil
}

// StartSignInEnrolment answers the TOTP key of a sign-in that enrols a factor.
func (s *LoginServer) StartSignInEnrolment(ctx context.Context, req *identityv1.SecondFactorFlow) (*identityv1.TotpKey, error) {
	return totpKey(s.svc.StartSignInEnrolment(ctx, req.GetFlow()))
}

// StartSignInPasskeyEnrolment answers the passkey options of a sign-in that enrols a factor.
func (s *LoginServer) StartSignInPasskeyEnrolment(ctx context.Context, req *identityv1.SecondFactorFlow) (*identityv1.PasskeyCeremony, error) {
	return ceremony(s.svc.StartSignInPasskeyEnrolment(ctx, req.GetFlow()))
}

// VerifySecondFactor checks a sign-in's second factor and continues the authorization request.
func (s *LoginServer) VerifySecondFactor(ctx context.Context, req *identityv1.VerifySecondFactorRequest) (*identityv1.LoginRedirect, error) {
	return loginRedirect(s.svc.VerifySecondFactor(ctx, app.SecondFactorInput{
		Flow: req.GetFlow(), Code: req.GetCode(), Passkey: req.GetPasskey(), PasskeyState: req.GetPasskeyState(),
		ClientIP: req.GetClientIp(), UserAgent: req.GetUserAgent(),
	}))
}

func totpKey(k *otp.Key, err error) (*identityv1.TotpKey, error) {
	if err != nil {
		return nil, err
	}
	return &identityv1.TotpKey{OtpauthUrl: k.URL(), Secret: k.Secret()}, nil
}

// StartPasskeyRegistration begins adding a passkey for the access token's user.
func (s *LoginServer) StartPasskeyRegistration(ctx context.Context, req *identityv1.AccountRequest) (*identityv1.PasskeyCeremony, error) {
	return ceremony(s.svc.StartPasskeyRegistration(ctx, req.GetAccessToken()))
}

// FinishPasskeyRegistration stores the passkey the browser created.
func (s *LoginServer) FinishPasskeyRegistration(ctx context.Context, req *identityv1.FinishPasskeyRegistrationRequest) (*identityv1.RecoveryCodes, error) {
	codes, err := s.svc.FinishPasskeyRegistration(ctx, app.PasskeyRegistration{
		AccessToken: req.GetAccessToken(), Credential: req.GetCredential(), State: req.GetState(),
		Current: req.GetCurrentPassword(), ClientIP: req.GetClientIp(),
	})
	if err != nil {
		return nil, err
	}
	return &identityv1.RecoveryCodes{Codes: codes}, nil
}

// StartPasskeyAssertion answers a sign-in's passkey options.
func (s *LoginServer) StartPasskeyAssertion(ctx context.Context, req *identityv1.SecondFactorFlow) (*identityv1.PasskeyCeremony, error) {
	return ceremony(s.svc.StartPasskeyAssertion(ctx, req.GetFlow()))
}

func ceremony(c app.PasskeyCeremony, err error) (*identityv1.PasskeyCeremony, error) {
	if err != nil {
		return nil, err
	}
	return &identityv1.PasskeyCeremony{Options: c.Options, State: c.State}, nil
}

// StartPasskeySignIn answers the options of a passkey sign-in.
func (s *LoginServer) StartPasskeySignIn(ctx context.Context, req *identityv1.DescribeLoginRequest) (*identityv1.PasskeyCeremony, error) {
	return ceremony(s.svc.StartPasskeySignIn(ctx, app.LoginParams{ClientID: req.GetClientId(), RedirectURI: req.GetRedirectUri()}))
}

// PasskeySignIn signs in with a passkey instead of the password.
func (s *LoginServer) PasskeySignIn(ctx context.Context, req *identityv1.PasskeySignInRequest) (*identityv1.LoginRedirect, error) {
	return loginRedirect(s.svc.PasskeySignIn(ctx, app.PasskeySignInInput{
		Params: loginParams(req.GetParams()), Passkey: req.GetPasskey(), State: req.GetState(),
		ClientIP: req.GetClientIp(), UserAgent: req.GetUserAgent(),
	}))
}

// DescribeSignInMethods answers how the access token's user signs in.
func (s *LoginServer) DescribeSignInMethods(ctx context.Context, req *identityv1.AccountRequest) (*identityv1.SignInMethods, error) {
	m, err := s.svc.DescribeSignInMethods(ctx, req.GetAccessToken())
	if err != nil {
		return nil, err
	}
	out := &identityv1.SignInMethods{HasPassword: m.HasPassword, PasskeySignIn: m.PasskeySignIn}
	for _, p := range m.Providers {
		ap := &identityv1.AccountProvider{Slot: p.Slot, DisplayName: p.DisplayName, Linked: p.Link != nil}
		if p.Link != nil {
			ap.Email, ap.LinkedAt = p.Link.Email, convert.Timestamp(p.Link.CreatedAt)
		}
		out.Providers = append(out.Providers, ap)
	}
	for _, f := range m.Passkeys {
		out.Passkeys = append(out.Passkeys, &identityv1.AccountPasskey{Id: f.ID, CreatedAt: convert.Timestamp(f.CreatedAt)})
	}
	return out, nil
}

// StartProviderLink begins linking a provider identity to the access token's user.
func (s *LoginServer) StartProviderLink(ctx context.Context, req *identityv1.StartProviderLinkRequest) (*identityv1.ProviderRedirect, error) {
	start, err := s.svc.StartProviderLink(ctx, req.GetAccessToken(), req.GetSlot(), req.GetLanguage())
	if err != nil {
		return nil, err
	}
	return &identityv1.ProviderRedirect{Url: start.URL, Flow: start.Flow}, nil
}

// UnlinkProvider removes the access token's user's link of one slot.
func (s *LoginServer) UnlinkProvider(ctx context.Context, req *identityv1.UnlinkProviderRequest) (*emptypb.Empty, error) {
	return empty(s.svc.UnlinkProvider(ctx, app.UnlinkInput{
		AccessToken: req.GetAccessToken(), Slot: req.GetSlot(), Current: req.GetCurrentPassword(), ClientIP: req.GetClientIp(),
	}))
}

// RemoveSecondFactor removes one second factor of the access token's user.
func (s *LoginServer) RemoveSecondFactor(ctx context.Context, req *identityv1.RemoveSecondFactorRequest) (*emptypb.Empty, error) {
	return empty(s.svc.RemoveSecondFactor(ctx, app.RemoveFactorInput{
		AccessToken: req.GetAccessToken(), Kind: req.GetKind(), FactorID: req.GetFactorId(), Current: req.GetCurrentPassword(), ClientIP: req.GetClientIp(),
	}))
}

// empty answers a call whose only result is err.
func empty(err error) (*emptypb.Empty, error) {
	if err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}
