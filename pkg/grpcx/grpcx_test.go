package grpcx

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/reqid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

var info = &grpc.UnaryServerInfo{FullMethod: "/test.Service/Method"}

func TestPanicBecomesInternalWithoutDetail(t *testing.T) {
	var logs bytes.Buffer
	h := recovery(slog.New(slog.NewJSONHandler(&logs, nil)))
	_, err := h(context.Background(), nil, info, func(context.Context, any) (any, error) { panic("db password is hunter2") })
	st := status.Convert(err)
	if st.Code() != codes.Internal || strings.Contains(st.Message(), "hunter2") {
		t.Fatalf("status = %v", st)
	}
	if !strings.Contains(logs.String(), "panic in handler") {
		t.Fatalf("panic not logged: %s", logs.String())
	}
}

func TestCallsWithoutDeadlineGetOne(t *testing.T) {
	_, _ = deadline(context.Background(), nil, info, func(ctx context.Context, _ any) (any, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Fatal("handler ran without a deadline")
		}
		return nil, nil
	})
}

func TestRequestIDComesFromMetadataOrIsMinted(t *testing.T) {
	for name, md := range map[string]metadata.MD{
		"from metadata": metadata.Pairs(reqid.MetadataKey, "abc-123"),
		"minted":        nil,
		"unsafe value":  metadata.Pairs(reqid.MetadataKey, "bad\nid"),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := metadata.NewIncomingContext(context.Background(), md)
			_, _ = requestID(ctx, nil, info, func(ctx context.Context, _ any) (any, error) {
				id := reqid.From(ctx)
				if id == "" || strings.ContainsAny(id, "\n") || (name == "from metadata" && id != "abc-123") {
					t.Fatalf("request id = %q", id)
				}
				return nil, nil
			})
		})
	}
}

func TestACallCarriesTheRequestIDOnceWhetherOrNotItsCallerAddedIt(t *testing.T) {
	ctx := reqid.With(context.Background(), "req-1")
	for name, ctx := range map[string]context.Context{
		"from the context":             ctx,
		"already in the call metadata": metadata.AppendToOutgoingContext(ctx, reqid.MetadataKey, "req-1"),
	} {
		var got []string
		_ = forwardRequestID(ctx, "/m", nil, nil, nil, func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
			md, _ := metadata.FromOutgoingContext(ctx)
			got = md.Get(reqid.MetadataKey)
			return nil
		})
		if len(got) != 1 || got[0] != "req-1" {
			t.Errorf("%s: sent request ids %v, want [req-1]", name, got)
		}
	}
}

func TestServiceTokenIsSentOnlyWhenConfigured(t *testing.T) {
	for token, want := range map[string]int{"svc-token": 1, "": 0} {
		var got []string
		err := ServiceTokenInterceptor(token)(context.Background(), "/m", nil, nil, nil,
			func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				md, _ := metadata.FromOutgoingContext(ctx)
				got = md.Get(authn.MDServiceToken)
				return nil
			})
		if err != nil || len(got) != want {
			t.Fatalf("token %q: sent %v", token, got)
		}
	}
}
