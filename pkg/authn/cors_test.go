package authn

import (
	"context"
	"testing"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// corsIdentity answers the three kinds of route CORS distinguishes: public with an app field
// (ExchangeToken), tenant token (GetMe) and API key only (GetUser). ExchangeToken fails like a
// spent code does, to show that a refusal still carries the allowed origin.
type corsIdentity struct {
	identityv1.UnimplementedIdentityServiceServer
	identityv1.UnimplementedTokenServiceServer
}

func (corsIdentity) GetMe(context.Context, *identityv1.GetMeRequest) (*identityv1.User, error) {
	return &identityv1.User{}, nil
}

func (corsIdentity) GetUser(context.Context, *identityv1.GetUserRequest) (*identityv1.User, error) {
	return &identityv1.User{}, nil
}

func (corsIdentity) ExchangeToken(context.Context, *identityv1.ExchangeTokenRequest) (*identityv1.TokenList, error) {
	return nil, fault.InvalidField("code", "invalid code")
}

type fakeOrigins map[string][]string

func (f fakeOrigins) AppWebOrigins(_ context.Context, appID string) ([]string, error) {
	o, ok := f[appID]
	if !ok {
		return nil, fault.NotFound("app")
	}
	return o, nil
}

type originTokens struct{}

func (originTokens) VerifyAccessToken(_ context.Context, raw string) (Principal, error) {
	if raw != "token-app-1" {
		return Principal{}, fault.Unauthenticated("invalid access token")
	}
	return Principal{AppID: "app-1", TenantID: "t", UserID: "u", WebOrigins: []string{"https://shop.example"}}, nil
}

func TestPolicyEchoesTheOriginOnlyWhenTheAppInQuestionAllowsIt(t *testing.T) {
	p := Policy{
		Keys:    fakeKeys{"read-key": {KeyID: "k1", AppID: "app-1", Type: "read", AppEnabled: true}},
		Tokens:  originTokens{},
		Origins: fakeOrigins{"app-1": {"https://shop.example"}, "app-2": {"https://other.example"}},
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(p.UnaryInterceptor()))
	identityv1.RegisterIdentityServiceServer(srv, corsIdentity{})
	identityv1.RegisterTokenServiceServer(srv, corsIdentity{})
	conn := grpctest.Serve(t, srv)
	ids, tokens := identityv1.NewIdentityServiceClient(conn), identityv1.NewTokenServiceClient(conn)

	exchange := func(ctx context.Context, h *metadata.MD) error {
		_, err := tokens.ExchangeToken(ctx, &identityv1.ExchangeTokenRequest{ClientId: "app-1"}, grpc.Header(h))
		return err
	}
	exchangeApp2 := func(ctx context.Context, h *metadata.MD) error {
		_, err := tokens.ExchangeToken(ctx, &identityv1.ExchangeTokenRequest{ClientId: "app-2"}, grpc.Header(h))
		return err
	}
	exchangeUnknown := func(ctx context.Context, h *metadata.MD) error {
		_, err := tokens.ExchangeToken(ctx, &identityv1.ExchangeTokenRequest{ClientId: "nope"}, grpc.Header(h))
		return err
	}
	me := func(ctx context.Context, h *metadata.MD) error {
		_, err := ids.GetMe(ctx, &identityv1.GetMeRequest{}, grpc.Header(h))
		return err
	}
	getUser := func(ctx context.Context, h *metadata.MD) error {
		_, err := ids.GetUser(ctx, &identityv1.GetUserRequest{UserId: "u"}, grpc.Header(h))
		return err
	}
	cases := []struct {
		name   string
		call   func(context.Context, *metadata.MD) error
		md     metadata.MD
		origin string // the allowed origin echoed, "" for none
	}{
		{"route 1 from an origin of its client_id", exchange, metadata.Pairs(MDOrigin, "https://shop.example"), "https://shop.example"},
		{"route 1 echoes the origin as the browser sent it", exchange, metadata.Pairs(MDOrigin, "https://SHOP.example:443"), "https://SHOP.example:443"},
		{"route 1 from a foreign origin", exchange, metadata.Pairs(MDOrigin, "https://evil.example"), ""},
		{"route 1 from another app's origin", exchangeApp2, metadata.Pairs(MDOrigin, "https://shop.example"), ""},
		{"route 1 for an unknown app", exchangeUnknown, metadata.Pairs(MDOrigin, "https://shop.example"), ""},
		{"route 1 without an origin", exchange, nil, ""},
		{"route 1 from an opaque origin", exchange, metadata.Pairs(MDOrigin, "null"), ""},
		{"token route from the token app's origin", me, metadata.Pairs(MDOrigin, "https://shop.example", MDAuthorization, "Bearer token-app-1"), "https://shop.example"},
		{"token route from a foreign origin", me, metadata.Pairs(MDOrigin, "https://evil.example", MDAuthorization, "Bearer token-app-1"), ""},
		{"token route with an invalid token", me, metadata.Pairs(MDOrigin, "https://shop.example", MDAuthorization, "Bearer forged"), ""},
		{"API key from an allowed origin", getUser, metadata.Pairs(MDOrigin, "https://shop.example", MDAPIKey, "read-key", MDAPIKeyType, "read", MDClientID, "app-1"), ""},
		{"two origins", me, metadata.Pairs(MDOrigin, "https://shop.example", MDOrigin, "https://shop.example", MDAuthorization, "Bearer token-app-1"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h metadata.MD
			_ = tc.call(metadata.NewOutgoingContext(context.Background(), tc.md), &h)
			got := h.Get(MDAllowOrigin)
			switch {
			case tc.origin == "" && len(got) != 0:
				t.Fatalf("allowed origin %q, want none", got)
			case tc.origin != "" && (len(got) != 1 || got[0] != tc.origin):
				t.Fatalf("allowed origin %q, want %q", got, tc.origin)
			}
		})
	}
}
