package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/logx"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/testkit/grpctest"
	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

// answer is what a fake backend returns for one RPC.
type answer struct {
	resp proto.Message
	err  error
	// header and trailer are gRPC metadata the backend sends; the edge must never turn them into
	// HTTP headers.
	header, trailer metadata.MD
	// untilCanceled holds the call until its caller gives up, and answers what gRPC answers then.
	untilCanceled bool
}

// call is one RPC a fake backend received.
type call struct {
	method string
	req    proto.Message
	md     metadata.MD
}

// fakeBackend is an in-process gRPC server (bufconn). The registered services are the generated
// Unimplemented servers; an interceptor records every call and answers the methods a test programs,
// so an unprogrammed RPC fails loudly as Unimplemented.
type fakeBackend struct {
	mu      sync.Mutex
	answers map[string]answer
	calls   []call
	// fallback, when set, answers every unprogrammed RPC (the fuzz targets reach any of them).
	fallback *answer
}

func (f *fakeBackend) program(method string, a answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[method] = a
}

func (f *fakeBackend) received() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// only returns the single call received, failing the test otherwise.
func (f *fakeBackend) only(t *testing.T) call {
	t.Helper()
	calls := f.received()
	if len(calls) != 1 {
		t.Fatalf("backend received %d calls, want 1", len(calls))
	}
	return calls[0]
}

func (f *fakeBackend) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.calls = append(f.calls, call{method: info.FullMethod, req: proto.Clone(req.(proto.Message)), md: md.Copy()})
	a, ok := f.answers[info.FullMethod]
	if !ok && f.fallback != nil {
		a, ok = *f.fallback, true
	}
	f.mu.Unlock()
	if !ok {
		return handler(ctx, req)
	}
	if a.untilCanceled {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if a.header != nil {
		if err := grpc.SetHeader(ctx, a.header); err != nil {
			return nil, err
		}
	}
	if a.trailer != nil {
		if err := grpc.SetTrailer(ctx, a.trailer); err != nil {
			return nil, err
		}
	}
	return a.resp, a.err
}

// startBackend serves register's services on a bufconn listener and returns a client connection.
func startBackend(t testing.TB, register func(*grpc.Server)) (*fakeBackend, *grpc.ClientConn) {
	t.Helper()
	f := &fakeBackend{answers: map[string]answer{}}
	srv := grpc.NewServer(grpc.UnaryInterceptor(f.intercept))
	register(srv)
	return f, grpctest.Serve(t, srv)
}

// harness drives the real edge handler against fake identity, tenant, analytics, billing and
// webhook backends.
type harness struct {
	handler   http.Handler
	identity  *fakeBackend
	tenant    *fakeBackend
	analytics *fakeBackend
	billing   *fakeBackend
	lists     *fakeLists // analytics' streamed lists
	webhooks  *fakeWebhooks
	logs      *bytes.Buffer
	conns     map[string]grpc.ClientConnInterface
}

// newHarness builds the edge over the fakes; each replace may swap connections first (a backend
// that is down).
func newHarness(t testing.TB, replace ...func(conns map[string]grpc.ClientConnInterface)) *harness {
	t.Helper()
	identity, icc := startBackend(t, func(s *grpc.Server) {
		identityv1.RegisterIdentityServiceServer(s, identityv1.UnimplementedIdentityServiceServer{})
		identityv1.RegisterTokenServiceServer(s, identityv1.UnimplementedTokenServiceServer{})
		identityv1.RegisterOperatorServiceServer(s, identityv1.UnimplementedOperatorServiceServer{})
		identityv1.RegisterLoginServiceServer(s, identityv1.UnimplementedLoginServiceServer{})
		identityv1.RegisterMemberServiceServer(s, identityv1.UnimplementedMemberServiceServer{})
		identityv1.RegisterIdentityAdminServiceServer(s, identityv1.UnimplementedIdentityAdminServiceServer{})
	})
	tenant, tcc := startBackend(t, func(s *grpc.Server) {
		tenantv1.RegisterTenantServiceServer(s, tenantv1.UnimplementedTenantServiceServer{})
	})
	lists := &fakeLists{}
	analytics, acc := startBackend(t, func(s *grpc.Server) { analyticsv1.RegisterAnalyticsServiceServer(s, lists) })
	billing, bcc := startBackend(t, func(s *grpc.Server) {
		billingv1.RegisterBillingServiceServer(s, billingv1.UnimplementedBillingServiceServer{})
		billingv1.RegisterPaymentPageServiceServer(s, billingv1.UnimplementedPaymentPageServiceServer{})
	})
	webhooks := &fakeWebhooks{}
	_, wcc := startBackend(t, func(s *grpc.Server) { webhookv1.RegisterWebhookIngestServiceServer(s, webhooks) })
	conns := map[string]grpc.ClientConnInterface{"identity": icc, "tenant": tcc, "analytics": acc, "billing": bcc, "webhook": wcc}
	// Every other module the edge forwards to (a context added since) gets a backend that serves
	// nothing: its routes answer Unimplemented.
	for _, m := range Modules() {
		if conns[m] == nil {
			_, conns[m] = startBackend(t, func(*grpc.Server) {})
		}
	}
	for _, r := range replace {
		r(conns)
	}
	logs := &bytes.Buffer{}
	h, err := New(t.Context(), conns, logx.New(logs, "info"), WithLogin(conns[LoginModule]), WithPayment(conns[PaymentModule]),
		WithConsole(consoleKey))
	if err != nil {
		t.Fatalf("edge.New: %v", err)
	}
	return &harness{handler: h, identity: identity, tenant: tenant, analytics: analytics, billing: billing, lists: lists, webhooks: webhooks, logs: logs, conns: conns}
}

// do sends one request through the edge. An empty body sends none; headers are set as given.
func (h *harness) do(t *testing.T, method, target, body string, headers map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequestWithContext(t.Context(), method, target, r)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	return rec
}

// discard is a logger for tests that do not read the log.
var discard = slog.New(slog.DiscardHandler)

// wire is what the edge receives for err from a service: the status the server chain maps it to.
func wire(err error) error { return grpcx.StatusOf(err).Err() }

// jsonHeader is the header set of a plain JSON request.
var jsonHeader = map[string]string{"Content-Type": "application/json"}

// decode parses a JSON object response body.
func decode(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, rec.Body.String())
	}
	return m
}

// topLevelKeys returns the keys of a JSON object in the order they appear.
func topLevelKeys(t *testing.T, body []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("body is not a JSON object: %s", body)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("read key: %v", err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("read value of %v: %v", tok, err)
		}
	}
	return keys
}

// wantV1Failure checks a /v1 error answer.
func wantV1Failure(t *testing.T, rec *httptest.ResponseRecorder, status int, errText string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body.String())
	}
	if got := rec.Header().Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
	want := map[string]any{"success": false, "error": errText, "message": nil, "data": nil}
	assertJSON(t, decode(t, rec), want)
	keys := topLevelKeys(t, rec.Body.Bytes())
	if strings.Join(keys, ",") != "success,error,message,data" {
		t.Errorf("key order = %v, want success,error,message,data", keys)
	}
}

// wantAPIFailure checks an /api/v1 error answer.
func wantAPIFailure(t *testing.T, rec *httptest.ResponseRecorder, status int, validation, code, message string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body %s", rec.Code, status, rec.Body.String())
	}
	want := map[string]any{"errors": []any{map[string]any{"validation": validation, "code": code, "message": message}}}
	assertJSON(t, decode(t, rec), want)
}

// assertJSON compares parsed JSON values.
func assertJSON(t *testing.T, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) { // encoding/json sorts map keys, so equal values marshal equally
		t.Errorf("body mismatch\n got: %s\nwant: %s", g, w)
	}
}

// logLines parses a JSON log, one record a line.
func logLines(t *testing.T, log []byte) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for line := range bytes.Lines(log) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		lines = append(lines, rec)
	}
	return lines
}
