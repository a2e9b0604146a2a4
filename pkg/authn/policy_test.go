package authn

import (
	"context"
	"testing"

	"github.com/berthhq/berth/pkg/apierr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	_ "github.com/berthhq/berth/proto/identity/v1" // registers the route options looked up below
)

type fakeKeys map[string]VerifiedKey

func (f fakeKeys) VerifyAPIKey(_ context.Context, key, clientID string) (VerifiedKey, error) {
	vk, ok := f[key]
	if !ok || vk.AppID != clientID {
		return VerifiedKey{}, apierr.Unauthenticated("invalid API key")
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
		return Principal{}, apierr.Unauthenticated("Unauthorized Token")
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
		want   codes.Code
	}{
		{"read key on read route", readRoute, apiKey("read-key", "read", "app-1"), codes.OK},
		{"no credentials", readRoute, nil, codes.Unauthenticated},
		{"missing key type", readRoute, metadata.Pairs(MDAPIKey, "read-key", MDClientID, "app-1"), codes.Unauthenticated},
		{"unknown key type", readRoute, apiKey("read-key", "admin", "app-1"), codes.Unauthenticated},
		{"missing client id", readRoute, metadata.Pairs(MDAPIKey, "read-key", MDAPIKeyType, "read"), codes.Unauthenticated},
		{"client id of another app", readRoute, apiKey("read-key", "read", "app-2"), codes.Unauthenticated},
		{"unknown key", readRoute, apiKey("nope", "read", "app-1"), codes.Unauthenticated},
		{"claimed type differs from stored type", readRoute, apiKey("read-key", "write", "app-1"), codes.PermissionDenied},
		{"write key on read-only route", readRoute, apiKey("write-key", "write", "app-1"), codes.PermissionDenied},
		{"read key on write route", writeRoute, apiKey("read-key", "read", "app-1"), codes.PermissionDenied},
		{"write key on write route", writeRoute, apiKey("write-key", "write", "app-1"), codes.OK},
		{"read key on read-or-write route", anyRoute, apiKey("read-key", "read", "app-1"), codes.OK},
		{"write key on read-or-write route", anyRoute, apiKey("write-key", "write", "app-1"), codes.OK},
		{"key of a disabled app", readRoute, apiKey("disabled-key", "read", "app-2"), codes.PermissionDenied},
		{"bearer token before tokens exist", anyRoute, metadata.Pairs(MDAuthorization, "Bearer x.y.z"), codes.Unauthenticated},
		{"bearer token on API-key-only route", readRoute, metadata.Pairs(MDAuthorization, "Bearer x.y.z"), codes.Unauthenticated},
		{"admin token on admin route", adminRoute, metadata.Pairs(MDAdminToken, "admin-secret"), codes.OK},
		{"wrong admin token", adminRoute, metadata.Pairs(MDAdminToken, "admin-secreT"), codes.Unauthenticated},
		{"API key on admin route", adminRoute, apiKey("write-key", "write", "app-1"), codes.Unauthenticated},
		{"service token on internal route", svcRoute, metadata.Pairs(MDServiceToken, "service-secret"), codes.OK},
		{"admin token on internal route", svcRoute, metadata.Pairs(MDAdminToken, "admin-secret"), codes.Unauthenticated},
		{"operator route without token", "/berth.identity.v1.OperatorService/UpdateApiKey", nil, codes.Unauthenticated},
		{"operator route with an API key", "/berth.identity.v1.OperatorService/UpdateApiKey", apiKey("write-key", "write", "app-1"), codes.Unauthenticated},
		{"operator route with an invalid token", "/berth.identity.v1.OperatorService/UpdateApiKey", metadata.Pairs(MDAuthorization, "Bearer app-token"), codes.Unauthenticated},
		{"operator route with an operator token", "/berth.identity.v1.OperatorService/UpdateApiKey", metadata.Pairs(MDAuthorization, "Bearer operator-token"), codes.OK},
		{"method without route option", "/berth.identity.v1.IdentityService/Nope", apiKey("read-key", "read", "app-1"), codes.PermissionDenied},
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
			if got := status.Code(err); got != tc.want {
				t.Fatalf("code = %v (%v), want %v", got, err, tc.want)
			}
			if tc.want == codes.OK && tc.md.Get(MDAPIKey) != nil && seen.AppID != "app-1" {
				t.Fatalf("handler saw principal %+v, want app-1", seen)
			}
		})
	}
}

func TestEmptyConfiguredTokensNeverMatch(t *testing.T) {
	p := Policy{}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MDAdminToken, ""))
	_, err := p.UnaryInterceptor()(ctx, nil, &grpc.UnaryServerInfo{FullMethod: adminRoute}, func(context.Context, any) (any, error) { return nil, nil })
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("an unset admin token admitted a caller: %v", err)
	}
}
