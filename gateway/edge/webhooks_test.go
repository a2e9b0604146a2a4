package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// fakeWebhooks records the deliveries the edge forwards and answers a set receipt or error.
type fakeWebhooks struct {
	webhookv1.UnimplementedWebhookIngestServiceServer
	mu      sync.Mutex
	got     *webhookv1.Delivery
	receipt *webhookv1.Receipt
	err     error
	// untilCanceled holds each delivery until the edge gives up on it.
	untilCanceled bool
}

func (f *fakeWebhooks) answer(ctx context.Context, d *webhookv1.Delivery) (*webhookv1.Receipt, error) {
	if f.record(d) {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if f.receipt != nil {
		return f.receipt, nil
	}
	return &webhookv1.Receipt{Received: true}, nil
}

// record keeps d as the delivery received and reports whether to hold it until the edge gives up.
func (f *fakeWebhooks) record(d *webhookv1.Delivery) (hold bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = d
	return f.untilCanceled
}

func (f *fakeWebhooks) ReceivePspx(ctx context.Context, d *webhookv1.Delivery) (*webhookv1.Receipt, error) {
	return f.answer(ctx, d)
}

func (f *fakeWebhooks) ReceivePspy(ctx context.Context, d *webhookv1.Delivery) (*webhookv1.Receipt, error) {
	return f.answer(ctx, d)
}

// delivered reports whether a delivery has arrived.
func (f *fakeWebhooks) delivered() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got != nil
}

func TestWebhookRoutesForwardTheRawBytesAndRenderTheReceipt(t *testing.T) {
	h := newHarness(t)
	raw := []byte("{\"id\":\"evt_1\",  \"object\":\"event\"}\n\xff") // not re-encoded, not judged by the text rule
	cases := []struct {
		name, path, contentType string
		body                    []byte
		receipt                 *webhookv1.Receipt
		err                     error
		status                  int
		want                    string
	}{
		{"route 3", PspxWebhookPath, "application/json", raw, nil, nil, 200, `{"received":true}`},
		{"route 3, another deployment's object", PspxWebhookPath, "application/json", raw,
			&webhookv1.Receipt{Received: true, Host: proto.String("other.example"), WrongHost: proto.Bool(true)}, nil, 200,
			`{"received":true,"host":"other.example","wrongHost":true}`},
		{"route 3 unverifiable", PspxWebhookPath, "application/json", raw, nil, status.Error(codes.InvalidArgument, "not verifiable"), 400, ""},
		{"route 3 effect failed", PspxWebhookPath, "application/json", raw, nil, status.Error(codes.Internal, "billing down"), 500, ""},
		{"route 4 form-encoded", PspyWebhookPath + "?paymentProviderUuid=abc", "application/x-www-form-urlencoded", []byte("id=tr_1"),
			&webhookv1.Receipt{Received: true, Status: proto.String("open")}, nil, 200, `{"received":true,"status":"open"}`},
		{"route 4 ignored", PspyWebhookPath, "application/json", []byte(`{}`),
			&webhookv1.Receipt{Received: true, Ignored: proto.Bool(true)}, nil, 200, `{"received":true,"ignored":true}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h.webhooks.mu.Lock()
			h.webhooks.receipt, h.webhooks.err = tc.receipt, tc.err
			h.webhooks.mu.Unlock()
			req := httptest.NewRequest(http.MethodPost, tc.path, bytes.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.contentType)
			req.Header.Set("Pspx-Signature", "t=1,v1=ab")
			rec := httptest.NewRecorder()
			h.handler.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.want != "" && !jsonEqual(t, rec.Body.Bytes(), []byte(tc.want)) {
				t.Fatalf("body %s, want %s", rec.Body, tc.want)
			}
			if tc.status >= 400 {
				var body struct {
					Errors []struct{ Code string } `json:"errors"`
				}
				if json.Unmarshal(rec.Body.Bytes(), &body) != nil || len(body.Errors) != 1 {
					t.Fatalf("error body %s is not the /api/v1 shape", rec.Body)
				}
			}
			h.webhooks.mu.Lock()
			got := h.webhooks.got
			h.webhooks.mu.Unlock()
			if !bytes.Equal(got.GetBody(), tc.body) || got.GetContentType() != tc.contentType || got.GetSignature() != "t=1,v1=ab" {
				t.Fatalf("forwarded %q %q %q", got.GetBody(), got.GetContentType(), got.GetSignature())
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
