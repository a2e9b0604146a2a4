package authn

import (
	"context"
	"crypto/subtle"
	"strings"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/route"
	"github.com/berthhq/berth/pkg/weborigin"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Metadata keys that carry credentials.
const (
	MDAPIKey        = "x-api-key"
	MDAPIKeyType    = "x-api-key-type"
	MDClientID      = "x-client-id"
	MDAuthorization = "authorization"
	MDAdminToken    = "x-berth-admin-token"
	MDServiceToken  = "x-berth-service-token"
)

// CORS metadata. The edge forwards a browser's Origin header as MDOrigin; when the app in
// question allows that origin, the policy answers with response header MDAllowOrigin carrying it,
// which the edge alone turns into Access-Control-Allow-Origin.
const (
	MDOrigin      = "origin"
	MDAllowOrigin = "berth-cors-allow-origin"
)

// Policy decides, from the route option of the called method, whether a call may proceed.
type Policy struct {
	Keys      KeyVerifier      // API-key verification (identity: local; other services: remote + cache)
	Tokens    TokenVerifier    // tenant access tokens (identity: local; other services: remote + cache)
	Operators OperatorVerifier // project members' operator tokens (identity: local; other services: remote + cache)
	// Apps names the project that owns an app, for operator routes that name an app (identity:
	// its store; other services: remote + cache).
	Apps         AppProjects
	AdminToken   string // provisioning calls; "" disables them
	ServiceToken string // service-to-service calls; "" disables them
	// ServiceCertificate requires calls with the service token to come over TLS with a client
	// certificate the deployment's CA signed (mutual TLS), so a leaked token alone opens nothing.
	// Set when the process serves TLS.
	ServiceCertificate bool
	// Origins lists an app's allowed browser origins for routes that name their app in the
	// request (cors_app_field: route 1's client_id). Only identity, which owns apps, sets it;
	// tenant-token routes take the origins from the token's verification instead.
	Origins OriginSource
}

// OriginSource answers an app's allowed browser origins, normalised (pkg/weborigin). An unknown
// app is an error; the policy then allows no origin and lets the handler answer the request.
type OriginSource interface {
	AppWebOrigins(ctx context.Context, appID string) ([]string, error)
}

// exempt methods carry no route option but are safe without credentials.
func exempt(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/")
}

// UnaryInterceptor enforces the policy and puts the admitted Principal into the handler's context.
// A method without a route option is denied: access is declared, never assumed.
func (p Policy) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if exempt(info.FullMethod) {
			return handler(ctx, req)
		}
		r, principal, err := p.admitMethod(ctx, info.FullMethod)
		if err != nil {
			return nil, err
		}
		// Before the handler and the scope check, so a refused request (a code that does not
		// exchange, a token for another user) still reaches the browser page that sent it.
		if origin := p.allowedOrigin(ctx, r, req, principal); origin != "" {
			_ = grpc.SetHeader(ctx, metadata.Pairs(MDAllowOrigin, origin))
		}
		if principal == nil {
			return handler(withActor(ctx, nil), req)
		}
		scoped, err := p.scopeRequest(ctx, r, req, *principal)
		if err != nil {
			return nil, err
		}
		return handler(withActor(ctx, &scoped), req)
	}
}

// StreamInterceptor is UnaryInterceptor for streaming RPCs: the same option decides, a method
// without one is denied, and a tenant access token's scope is checked on every message the client
// sends, since a stream's request fields only arrive with its messages.
func (p Policy) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if exempt(info.FullMethod) {
			return handler(srv, ss)
		}
		r, principal, err := p.admitMethod(ss.Context(), info.FullMethod)
		if err != nil {
			return err
		}
		// A stream's request fields arrive later, so only a token's app can allow an origin here.
		if origin := p.allowedOrigin(ss.Context(), r, nil, principal); origin != "" {
			_ = ss.SetHeader(metadata.Pairs(MDAllowOrigin, origin))
		}
		if principal == nil {
			return handler(srv, &anonymousStream{ServerStream: ss, ctx: withActor(ss.Context(), nil)})
		}
		return handler(srv, &admittedStream{ServerStream: ss, ctx: withActor(ss.Context(), principal), policy: p, route: r, principal: *principal})
	}
}

// admittedStream hands the handler the Principal and checks each received message against a
// tenant token's or an operator's scope. An operator's app arrives with the first message, so the
// Principal the handler reads from Context is the one that message was admitted as (a server
// stream's handler receives its request before it reads the context), and every later message
// must name the same app.
type admittedStream struct {
	grpc.ServerStream
	ctx       context.Context
	policy    Policy
	route     *edgev1.Route
	principal Principal
	admitted  *Principal // the first message's scoped Principal
}

func (s *admittedStream) Context() context.Context { return s.ctx }

// anonymousStream hands a public route's handler the anonymous caller's actor.
type anonymousStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *anonymousStream) Context() context.Context { return s.ctx }

func (s *admittedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	scoped, err := s.policy.scopeRequest(s.ServerStream.Context(), s.route, m, s.principal)
	if err != nil {
		return err
	}
	if s.admitted == nil {
		s.admitted = &scoped
		s.ctx = withActor(s.ServerStream.Context(), &scoped)
		return nil
	}
	if s.admitted.AppID != scoped.AppID {
		return errOperatorOutsideProject()
	}
	return nil
}

// admitMethod finds the method's route option and admits the caller under it; a nil Principal
// admits a public route's anonymous caller.
func (p Policy) admitMethod(ctx context.Context, fullMethod string) (*edgev1.Route, *Principal, error) {
	r, ok := route.ForMethod(fullMethod)
	if !ok {
		return nil, nil, fault.Forbidden("method has no access policy")
	}
	principal, err := p.admit(ctx, r)
	return r, principal, err
}

// CallerApp is the app of the admitted caller, for handlers of API-key and tenant-token routes. The
// policy puts a Principal with an app into the context of every such route, so its absence is a
// wiring fault, answered as Unauthenticated rather than served unscoped.
func CallerApp(ctx context.Context) (string, error) {
	p, ok := FromContext(ctx)
	if !ok || strings.TrimSpace(p.AppID) == "" {
		return "", fault.Unauthenticated("Unauthorized")
	}
	return p.AppID, nil
}

// errAppNotFound answers a path naming an app other than the caller's: the same answer as an
// absent app, so a key learns nothing about other apps.
var errAppNotFound = fault.NotFound("App not found")

// OwnApp holds the app id of a route's path to the caller's app (CallerApp): a key or token acts
// on its own app only. An id that is not a UUID is an invalid appId; any other app is "not found".
func OwnApp(callerApp, appID string) error {
	appID = strings.ToLower(strings.TrimSpace(appID))
	if u, err := uuid.Parse(appID); err != nil || len(appID) != 36 || u.String() != appID {
		return fault.InvalidField("appId", "must be a UUID")
	}
	if appID != callerApp {
		return errAppNotFound
	}
	return nil
}

func (p Policy) admit(ctx context.Context, r *edgev1.Route) (*Principal, error) {
	// ValueFromIncomingContext reads one key without copying the call's whole metadata, which
	// FromIncomingContext does on every call.
	get := func(k string) string {
		if v := metadata.ValueFromIncomingContext(ctx, k); len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	if r.GetPublic() {
		return nil, nil
	}
	// An operator route admits a member's operator token beside its other credentials. It shares
	// the Authorization header with tenant access tokens, so the token's claimed audience picks
	// the one verifier that checks it in full; a token can therefore pass only as its own kind.
	// A caller presenting another credential the route takes (an API key, the admin token on an
	// admin route) is judged by that one, as before.
	if r.GetOperator() && get(MDAPIKey) == "" && (!r.GetAdmin() || get(MDAdminToken) == "") {
		if raw, ok := bearer(get(MDAuthorization)); ok && claimsOperatorAudience(raw) {
			return p.admitOperator(ctx, raw)
		}
	}
	switch {
	case r.GetAdmin():
		if !tokenEqual(p.AdminToken, get(MDAdminToken)) {
			return nil, fault.Unauthenticated("invalid admin token")
		}
		return &Principal{Kind: KindAdmin}, nil
	case r.GetServiceOnly():
		if !tokenEqual(p.ServiceToken, get(MDServiceToken)) {
			return nil, fault.Unauthenticated("invalid service token")
		}
		if p.ServiceCertificate && !verifiedClientCertificate(ctx) {
			return nil, fault.Unauthenticated("service calls need a client certificate the deployment's CA signed")
		}
		return &Principal{Kind: KindService}, nil
	}

	if key := get(MDAPIKey); key != "" {
		if r.GetApiKey() == edgev1.ApiKey_API_KEY_NONE {
			return nil, fault.Unauthenticated("this route does not accept API keys")
		}
		return p.admitKey(ctx, r, key, get(MDAPIKeyType), get(MDClientID))
	}
	if r.GetOperatorToken() {
		raw, ok := bearer(get(MDAuthorization))
		if !ok {
			return nil, fault.Unauthenticated("Unauthorized Token")
		}
		return p.admitOperator(ctx, raw)
	}
	if auth := get(MDAuthorization); auth != "" {
		if !r.GetTenantToken() {
			return nil, fault.Unauthenticated("this route does not accept access tokens")
		}
		raw, ok := bearer(auth)
		if !ok || p.Tokens == nil || claimsOperatorAudience(raw) {
			return nil, fault.Unauthenticated("invalid access token")
		}
		principal, err := p.Tokens.VerifyAccessToken(ctx, raw)
		if err != nil {
			return nil, err
		}
		principal.Kind = KindTenantToken
		return &principal, nil
	}
	return nil, fault.Unauthenticated("missing credentials")
}

// allowedOrigin is the CORS rule, written once for every service: the request's Origin (as the
// edge forwarded it) is echoed back only when the app in question allows it — the token's app on
// a tenant-token call, the app named by the route's cors_app_field on a public route — and never
// for API keys, operators, admins or services, whose credentials must not be usable from a page.
// It returns "" when no origin is allowed.
func (p Policy) allowedOrigin(ctx context.Context, r *edgev1.Route, req any, principal *Principal) string {
	vals := metadata.ValueFromIncomingContext(ctx, MDOrigin)
	if len(vals) != 1 || vals[0] == "" {
		return ""
	}
	origin := vals[0]
	var allowed []string
	switch {
	case principal != nil && principal.Kind == KindTenantToken:
		allowed = principal.WebOrigins
	case principal == nil && r.GetPublic() && r.GetCorsAppField() != "" && p.Origins != nil:
		appID := stringField(req, r.GetCorsAppField())
		if appID == "" {
			return ""
		}
		list, err := p.Origins.AppWebOrigins(ctx, appID)
		if err != nil {
			return ""
		}
		allowed = list
	}
	if !weborigin.Allowed(allowed, origin) {
		return ""
	}
	return origin // verbatim: the browser compares Access-Control-Allow-Origin with what it sent
}

// stringField reads a top-level string field of a request message by its proto name.
func stringField(req any, name string) string {
	msg, ok := req.(proto.Message)
	if !ok || msg == nil {
		return ""
	}
	fd := msg.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return ""
	}
	return strings.TrimSpace(msg.ProtoReflect().Get(fd).String())
}

// OperatorVerifier checks a project member's operator JWT: signature with the platform key, expiry,
// issuer and the operator audience (so app tokens never pass). It returns an Unauthenticated fault
// for any invalid token and a Principal whose UserID is the project member the token was issued
// to and whose ProjectID is the member's project. On operator routes the policy holds that project
// to what the request names (operatorScope); on operator_token routes the handler checks it.
type OperatorVerifier interface {
	VerifyOperatorToken(ctx context.Context, raw string) (Principal, error)
}

// bearer extracts the token of an "Authorization: Bearer <token>" value (scheme case-insensitive).
func bearer(v string) (string, bool) {
	scheme, token, found := strings.Cut(v, " ")
	token = strings.TrimSpace(token)
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// Me is the id a client may send for "the access token's own user or tenant" (the REST wrapper
// calls PUT /v1/users/me and PUT /v1/tenants/me). Compared case-insensitively, like ids.
const Me = "me"

// scopeRequest applies the route's token fields to an admitted caller's request: `me` is resolved
// (resolveMe), then a tenant access token is held to its own app, tenant and user (tokenScope) and
// an operator to the member's project (operatorScope). It returns the Principal the handler acts
// for: an operator's carries the app the request names once its project is checked.
func (p Policy) scopeRequest(ctx context.Context, r *edgev1.Route, req any, pr Principal) (Principal, error) {
	if err := resolveMe(r, req, pr); err != nil {
		return Principal{}, err
	}
	switch pr.Kind {
	case KindTenantToken:
		if err := tokenScope(r, req, pr); err != nil {
			return Principal{}, err
		}
		if r.GetTokenAppField() != "" {
			return pr, nil // tokenScope held the named app to the token's
		}
		return pr, namedApp(r, req, pr)
	case KindAPIKey:
		return pr, namedApp(r, req, pr)
	case KindOperator:
		return p.operatorScope(ctx, r, req, pr)
	}
	return pr, nil
}

// namedApp holds the app a request names for operators (operator_app_field) to the app of an API
// key or tenant access token, which act on their own app only: naming another is answered as
// OwnApp answers it, and naming none leaves the caller's app in force.
func namedApp(r *edgev1.Route, req any, pr Principal) error {
	if r.GetOperatorAppField() == "" {
		return nil
	}
	if appID := stringField(req, r.GetOperatorAppField()); appID != "" {
		return OwnApp(pr.AppID, appID)
	}
	return nil
}

// resolveMe replaces `me` in the request fields that the route declares as the token's tenant or
// user (token_tenant_field, token_user_field, me_user_field) with the tenant access token's own
// id, before the scope check and the handler see them. It runs here, in every service's policy,
// so the REST edge and direct gRPC callers get the same answer and no handler knows about `me`.
// Any other caller (an API key) has no user or tenant of its own: `me` is then invalid input,
// named by field.
func resolveMe(r *edgev1.Route, req any, p Principal) error {
	msg, ok := req.(proto.Message)
	if !ok || msg == nil {
		return nil
	}
	m := msg.ProtoReflect()
	for _, f := range []struct{ field, own, what string }{
		{r.GetTokenTenantField(), p.TenantID, "tenant"},
		{r.GetTokenUserField(), p.UserID, "user"},
		{r.GetMeUserField(), p.UserID, "user"},
	} {
		if f.field == "" {
			continue
		}
		fd := m.Descriptor().Fields().ByName(protoreflect.Name(f.field))
		if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() || !strings.EqualFold(strings.TrimSpace(m.Get(fd).String()), Me) {
			continue
		}
		if p.Kind != KindTenantToken {
			return MeWithoutToken(f.field, f.what)
		}
		m.Set(fd, protoreflect.ValueOfString(f.own))
	}
	return nil
}

// MeWithoutToken is the answer to `me` from a caller without a tenant access token: invalid input
// naming field, the way an id that names no user or tenant is answered.
func MeWithoutToken(field, what string) error {
	return fault.InvalidField(field, "%q stands for the access token's own %s; with an API key name the %s by its id", Me, what, what)
}

// tokenScope limits a tenant access token to its own app, tenant and user: the route declares
// which request fields name them, so the rule is written once per route and holds for REST and
// gRPC callers alike. Ids compare case-insensitively because UUIDs may arrive in upper case.
func tokenScope(r *edgev1.Route, req any, p Principal) error {
	msg, ok := req.(proto.Message)
	if !ok {
		return fault.Forbidden("access token not accepted here")
	}
	for _, check := range []struct{ field, want, what string }{
		{r.GetTokenAppField(), p.AppID, "app"},
		{r.GetTokenTenantField(), p.TenantID, "tenant"},
		{r.GetTokenUserField(), p.UserID, "user"},
	} {
		if check.field == "" {
			continue
		}
		fd := msg.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(check.field))
		if fd == nil || fd.Kind() != protoreflect.StringKind {
			return fault.Forbidden("access token not accepted here")
		}
		got := msg.ProtoReflect().Get(fd).String()
		if check.want == "" || !strings.EqualFold(got, check.want) {
			return fault.Forbidden("the access token is not valid for this %s", check.what)
		}
	}
	return nil
}

func (p Policy) admitKey(ctx context.Context, r *edgev1.Route, key, claimedType, clientID string) (*Principal, error) {
	if claimedType != "read" && claimedType != "write" {
		return nil, fault.Unauthenticated("X-API-KEY-TYPE must be read or write")
	}
	if clientID == "" {
		return nil, fault.Unauthenticated("missing X-CLIENT-ID")
	}
	if p.Keys == nil {
		return nil, fault.Unauthenticated("API keys are not accepted here")
	}
	vk, err := p.Keys.VerifyAPIKey(ctx, key, clientID)
	if err != nil {
		return nil, err
	}
	if vk.Type != claimedType {
		return nil, fault.Forbidden("X-API-KEY-TYPE does not match the API key")
	}
	if !vk.AppEnabled {
		return nil, fault.Forbidden("App Is Disabled")
	}
	if !typeAllowed(r.GetApiKey(), vk.Type) {
		return nil, fault.Forbidden("this route needs an API key of another type")
	}
	return &Principal{Kind: KindAPIKey, AppID: vk.AppID, ProjectID: vk.ProjectID, KeyID: vk.KeyID, KeyType: vk.Type}, nil
}

func typeAllowed(want edgev1.ApiKey, have string) bool {
	switch want {
	case edgev1.ApiKey_API_KEY_READ:
		return have == "read"
	case edgev1.ApiKey_API_KEY_WRITE:
		return have == "write"
	case edgev1.ApiKey_API_KEY_READ_OR_WRITE:
		return have == "read" || have == "write"
	}
	return false
}

// tokenEqual compares in constant time; an unset expected token never matches.
func tokenEqual(expected, got string) bool {
	if expected == "" || got == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(expected), []byte(got)) == 1
}

// verifiedClientCertificate reports whether the call came over TLS with a client certificate that
// verified against the server's client CAs.
func verifiedClientCertificate(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return false
	}
	info, ok := p.AuthInfo.(credentials.TLSInfo)
	return ok && len(info.State.VerifiedChains) > 0
}
