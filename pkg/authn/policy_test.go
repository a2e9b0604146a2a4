package authn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"testing"

	"github.com/berthhq/berth/pkg/fault"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	_ "github.com/berthhq/berth/proto/identity/v1" // registers the route options looked up below
)

type fakeKeys map[string]VerifiedKey

func (f fakeKeys) VerifyAPIKey(_ context.Context, key, clientID string) (VerifiedKey, error) {
	vk, ok := f[key]
	if !ok || vk.AppID != clientID {
		return VerifiedKey{}, fault.Unauthenticated("invalid API key")
	}
	return vk, nil
}

const (
	readRoute  = "/berth.identity.v1.IdentityService/GetUser"         // API_KEY_READ
	writeRoute = "/berth.identity.v1.IdentityService/SetAccessStatus" // API_KEY_WRITE
	anyRoute   = "/berth.identity.v1.IdentityService/ListUserRoles"   // READ_OR_WRITE
	adminRoute = "/berth.identity.v1.IdentityAdminService/CreateApp"
	svcRoute   = "/berth.identity.v1.IdentityInternalService/VerifyApiKey"
)

type fakeOperators struct{}

func (fakeOperators) VerifyOperatorToken(_ context.Context, raw string) (Principal, error) {
	if raw != "operator-token" {
		return Principal{}, fault.Unauthenticated("Unauthorized Token")
	}
	return Principal{UserID: "member-1"}, nil
}

func TestPolicyAdmitsOnlyWhatTheRouteDeclares(t *testing.T) {
	keys := fakeKeys{
		"read-key":     {KeyID: "k1", AppID: "app-1", Type: "read", AppEnabled: true},
		"write-key":    {KeyID: "k2", AppID: "app-1", Type: "write", AppEnabled: true},
		"disabled-key": {KeyID: "k3", AppID: "app-2", Type: "read", AppEnabled: false},
	}
	p := Policy{Keys: keys, Operators: fakeOperators{}, AdminToken: "admin-secret", ServiceToken: "service-secret"}
	apiKey := func(key, typ, client string) metadata.MD {
		return metadata.Pairs(MDAPIKey, key, MDAPIKeyType, typ, MDClientID, client)
	}
	cases := []struct {
		name   string
		method string
		md     metadata.MD
		want   fault.Kind
	}{
		{"read key on read route", readRoute, apiKey("read-key", "read", "app-1"), admitted},
		{"no credentials", readRoute, nil, fault.KindUnauthenticated},
		{"missing key type", readRoute, metadata.Pairs(MDAPIKey, "read-key", MDClientID, "app-1"), fault.KindUnauthenticated},
		{"unknown key type", readRoute, apiKey("read-key", "admin", "app-1"), fault.KindUnauthenticated},
		{"missing client id", readRoute, metadata.Pairs(MDAPIKey, "read-key", MDAPIKeyType, "read"), fault.KindUnauthenticated},
		{"client id of another app", readRoute, apiKey("read-key", "read", "app-2"), fault.KindUnauthenticated},
		{"unknown key", readRoute, apiKey("nope", "read", "app-1"), fault.KindUnauthenticated},
		{"claimed type differs from stored type", readRoute, apiKey("read-key", "write", "app-1"), fault.KindForbidden},
		{"write key on read-only route", readRoute, apiKey("write-key", "write", "app-1"), fault.KindForbidden},
		{"read key on write route", writeRoute, apiKey("read-key", "read", "app-1"), fault.KindForbidden},
		{"write key on write route", writeRoute, apiKey("write-key", "write", "app-1"), admitted},
		{"read key on read-or-write route", anyRoute, apiKey("read-key", "read", "app-1"), admitted},
		{"write key on read-or-write route", anyRoute, apiKey("write-key", "write", "app-1"), admitted},
		{"key of a disabled app", readRoute, apiKey("disabled-key", "read", "app-2"), fault.KindForbidden},
		{"bearer token before tokens exist", anyRoute, metadata.Pairs(MDAuthorization, "Bearer x.y.z"), fault.KindUnauthenticated},
		{"bearer token on API-key-only route", readRoute, metadata.Pairs(MDAuthorization, "Bearer x.y.z"), fault.KindUnauthenticated},
		{"admin token on admin route", adminRoute, metadata.Pairs(MDAdminToken, "admin-secret"), admitted},
		{"wrong admin token", adminRoute, metadata.Pairs(MDAdminToken, "admin-secreT"), fault.KindUnauthenticated},
		{"API key on admin route", adminRoute, apiKey("write-key", "write", "app-1"), fault.KindUnauthenticated},
		{"service token on internal route", svcRoute, metadata.Pairs(MDServiceToken, "service-secret"), admitted},
		{"admin token on internal route", svcRoute, metadata.Pairs(MDAdminToken, "admin-secret"), fault.KindUnauthenticated},
		{"operator route without token", "/berth.identity.v1.OperatorService/UpdateApiKey", nil, fault.KindUnauthenticated},
		{"operator route with an API key", "/berth.identity.v1.OperatorService/UpdateApiKey", apiKey("write-key", "write", "app-1"), fault.KindUnauthenticated},
		{"operator route with an invalid token", "/berth.identity.v1.OperatorService/UpdateApiKey", metadata.Pairs(MDAuthorization, "Bearer app-token"), fault.KindUnauthenticated},
		{"operator route with an operator token", "/berth.identity.v1.OperatorService/UpdateApiKey", metadata.Pairs(MDAuthorization, "Bearer operator-token"), admitted},
		{"method without route option", "/berth.identity.v1.IdentityService/Nope", apiKey("read-key", "read", "app-1"), fault.KindForbidden},
	}
	icpt := p.UnaryInterceptor()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := metadata.NewIncomingContext(context.Background(), tc.md)
			var seen Principal
			_, err := icpt(ctx, nil, &grpc.UnaryServerInfo{FullMethod: tc.method}, func(ctx context.Context, _ any) (any, error) {
				seen, _ = FromContext(ctx)
				return nil, nil
			})
			if got := outcome(err); got != tc.want {
				t.Fatalf("code = %v (%v), want %v", got, err, tc.want)
			}
			if tc.want == admitted && tc.md.Get(MDAPIKey) != nil && seen.AppID != "app-1" {
				t.Fatalf("handler saw principal %+v, want app-1", seen)
			}
		})
	}
}

func TestEmptyConfiguredTokensNeverMatch(t *testing.T) {
	p := Policy{}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MDAdminToken, ""))
	_, err := p.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: adminRoute}, func(context.Context, any) (any, error) { return nil, nil })
	if outcome(err) != fault.KindUnauthenticated {
		t.Fatalf("an unset admin token admitted a caller: %v", err)
	}
}

// admitted is outcome's answer for a call the policy let through.
const admitted fault.Kind = -1

// outcome is how the policy answered: admitted, or the kind of the fault it returned (the status
// code each kind becomes is pkg/grpcx's concern and tested there).
func outcome(err error) fault.Kind {
	if err == nil {
		return admitted
	}
	if f, ok := fault.As(err); ok {
		return f.Kind()
	}
	return fault.Kind(-2) // not a fault: never a wanted outcome
}

// Under TLS the service token alone does not admit a service call: the caller's certificate, as
// verified by the TLS handshake, must come with it.
func TestServiceCallsNeedAVerifiedClientCertificateUnderTLS(t *testing.T) {
	p := Policy{ServiceToken: "service-secret", ServiceCertificate: true}
	verified := &peer.Peer{AuthInfo: credentials.TLSInfo{State: tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{}}}}}}
	unverified := &peer.Peer{AuthInfo: credentials.TLSInfo{State: tls.ConnectionState{}}}
	plaintext := &peer.Peer{}
	for _, tc := range []struct {
		name string
		peer *peer.Peer
		want fault.Kind
	}{
		{"a verified client certificate", verified, admitted},
		{"TLS without a client certificate", unverified, fault.KindUnauthenticated},
		{"plaintext", plaintext, fault.KindUnauthenticated},
		{"no peer at all", nil, fault.KindUnauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MDServiceToken, "service-secret"))
			if tc.peer != nil {
				ctx = peer.NewContext(ctx, tc.peer)
			}
			_, err := p.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: svcRoute}, func(context.Context, any) (any, error) { return nil, nil })
			if got := outcome(err); got != tc.want {
				t.Fatalf("outcome %v (%v), want %v", got, err, tc.want)
			}
		})
	}
}

func TestOwnAppAdmitsOnlyTheCallersAppAndAnswersOthersLikeAbsentOnes(t *testing.T) {
	const caller = "6f1c2d3e-4a5b-4c6d-8e7f-901234567890"
	tests := []struct {
		name, appID string
		kind        fault.Kind // -1: admitted
	}{
		{"the caller's app", caller, -1},
		{"the caller's app in capitals, with spaces", "  6F1C2D3E-4A5B-4C6D-8E7F-901234567890 ", -1},
		{"another app", "0d1c2d3e-4a5b-4c6d-8e7f-901234567890", fault.KindNotFound},
		{"not a UUID", "not-a-uuid", fault.KindInvalid},
		{"a UUID without its dashes", "6f1c2d3e4a5b4c6d8e7f901234567890", fault.KindInvalid},
		{"empty", "", fault.KindInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := OwnApp(caller, tc.appID)
			if tc.kind < 0 {
				if err != nil {
					t.Fatalf("OwnApp = %v, want the caller's app admitted", err)
				}
				return
			}
			if !fault.Is(err, tc.kind) {
				t.Fatalf("OwnApp = %v, want a %v fault", err, tc.kind)
			}
			var f *fault.Fault
			if tc.kind == fault.KindInvalid && (!errors.As(err, &f) || f.Field() != "appId") {
				t.Errorf("OwnApp = %v, want the field appId named", err)
			}
		})
	}
}
