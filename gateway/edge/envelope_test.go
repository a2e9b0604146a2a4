package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestMarshalerUsesProtoNamesEveryFieldAndIgnoresUnknownInput(t *testing.T) {
	buf, err := marshaler.Marshal(&identityv1.User{Id: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	var user map[string]any
	if err := json.Unmarshal(buf, &user); err != nil {
		t.Fatal(err)
	}
	if len(user) != 31 || user["given_name"] != "" || user["tenantId"] != false || user["id"] != "u1" {
		t.Errorf("marshaled user = %s, want all 31 fields under proto names", buf)
	}

	var patch identityv1.UserPatch
	if err := marshaler.Unmarshal([]byte(`{"given_name":"Ann","unknown":1}`), &patch); err != nil {
		t.Fatalf("unknown field refused: %v", err)
	}
	if patch.GetGivenName() != "Ann" {
		t.Errorf("given_name = %q, want Ann", patch.GetGivenName())
	}
}

func TestEnvelopeByFamily(t *testing.T) {
	key := &identityv1.PublicKey{Kind: "publicKey", PublicKey: "pem"}
	tests := []struct {
		name    string
		route   *edgev1.Route
		resp    proto.Message
		want    string // JSON of the rendered value
		wantErr bool
	}{
		{"api passes the message as is", &edgev1.Route{Family: edgev1.Family_FAMILY_API}, key,
			`{"kind":"publicKey","publicKey":"pem"}`, false},
		{"v1 wraps the message", &edgev1.Route{Family: edgev1.Family_FAMILY_V1, Message: "Public key retrieved"}, key,
			`{"success":true,"message":"Public key retrieved","error":null,"data":{"kind":"publicKey","publicKey":"pem"}}`, false},
		{"v1 data_null drops the message", &edgev1.Route{Family: edgev1.Family_FAMILY_V1, Message: "Done", DataNull: true}, key,
			`{"success":true,"message":"Done","error":null,"data":null}`, false},
		{"v1 empty response without data_null is an empty object", &edgev1.Route{Family: edgev1.Family_FAMILY_V1, Message: "Done"}, &emptypb.Empty{},
			`{"success":true,"message":"Done","error":null,"data":{}}`, false},
		{"no family fails closed", &edgev1.Route{Message: "x"}, key, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := envelope(context.Background(), "/test/Method", tt.route, tt.resp)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("envelope = %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			buf, err := marshaler.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var gotV, wantV any
			if err := json.Unmarshal(buf, &gotV); err != nil {
				t.Fatalf("rendered %s: %v", buf, err)
			}
			_ = json.Unmarshal([]byte(tt.want), &wantV)
			assertJSON(t, gotV, wantV)
		})
	}
}

// TestDeclaredSuccessStatusReachesTheClient drives grpc-gateway's own ForwardResponseMessage over a
// real HTTP connection with a route declaring 201 (routes 1, 13 and 23 will; none is implemented
// yet), proving the status is written before the runtime writes the body.
func TestDeclaredSuccessStatusReachesTheClient(t *testing.T) {
	created := &edgev1.Route{Family: edgev1.Family_FAMILY_API, SuccessStatus: http.StatusCreated}
	mux := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler),
		runtime.WithForwardResponseRewriter(func(_ context.Context, resp proto.Message) (any, error) {
			return envelope(context.Background(), "/test/Create", created, resp)
		}),
		runtime.WithForwardResponseOption(func(_ context.Context, w http.ResponseWriter, _ proto.Message) error {
			writeSuccessStatus(w, created)
			return nil
		}),
	)
	resp := &identityv1.UserRoleList{Kind: "userRole", ItemsLength: 1, Items: []*identityv1.UserRole{{Id: "r1"}}}
	err := mux.HandlePath(http.MethodPost, "/api/v1/things", func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		ctx := runtime.NewServerMetadataContext(r.Context(), runtime.ServerMetadata{})
		runtime.ForwardResponseMessage(ctx, mux, marshaler, w, r, resp, mux.GetForwardResponseOptions()...)
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(withMiddleware(mux, discard, nil))
	defer srv.Close()

	res, err := http.Post(srv.URL+"/api/v1/things", "application/json", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("status = %d, want 201; body %s", res.StatusCode, body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var got any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	assertJSON(t, got, map[string]any{"kind": "userRole", "itemsLength": 1, "items": []any{map[string]any{"id": "r1", "name": ""}}})
}

func TestDefaultSuccessStatusWritesNoHeader(t *testing.T) {
	rec := httptest.NewRecorder()
	writeSuccessStatus(rec, &edgev1.Route{Family: edgev1.Family_FAMILY_V1})
	// Nothing may have been written: a later WriteHeader by the runtime (e.g. an error) still wins.
	rec.WriteHeader(http.StatusInternalServerError)
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status = %d, want the later 500", rec.Code)
	}
}

func TestV1EnvelopeKeepsTheDocumentedKeyOrderAndEscapesTheMessage(t *testing.T) {
	got, err := envelope(context.Background(), "/test/Method", &edgev1.Route{Family: edgev1.Family_FAMILY_V1, Message: `Say "hi" <ü>`}, &identityv1.PublicKey{Kind: "publicKey"})
	if err != nil {
		t.Fatal(err)
	}
	buf, err := marshaler.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, buf); err != nil {
		t.Fatalf("not JSON: %s", buf)
	}
	const wantPrefix = `{"success":true,"message":"Say \"hi\" \u003cü\u003e","error":null,"data":{`
	if !strings.HasPrefix(compact.String(), wantPrefix) {
		t.Fatalf("envelope = %s, want it to start %s", compact.String(), wantPrefix)
	}
}

// BenchmarkV1Envelope compares the /v1 envelope as the edge builds it (bytes around the protojson
// data) with the baseline of encoding/json over a struct holding the data as json.RawMessage,
// which re-parses and re-compacts the data.
func BenchmarkV1Envelope(b *testing.B) {
	r := &edgev1.Route{Family: edgev1.Family_FAMILY_V1, Message: "User retrieved"}
	user := &identityv1.User{Kind: "user", Id: "8d0f6c1e-2f4a-4c55-9a64-2f1d6f3c8b11", Email: "ada@example.com", Name: "Ada Lovelace", GivenName: "Ada", FamilyName: "Lovelace"}
	b.Run("baseline", func(b *testing.B) {
		type v1Success struct {
			Success bool            `json:"success"`
			Message string          `json:"message"`
			Error   *string         `json:"error"`
			Data    json.RawMessage `json:"data"`
		}
		for b.Loop() {
			data, _ := protoJSON.Marshal(user)
			if _, err := json.Marshal(v1Success{Success: true, Message: r.GetMessage(), Data: data}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("edge", func(b *testing.B) {
		for b.Loop() {
			v, err := envelope(context.Background(), "/bench/Get", r, user)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := marshaler.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
