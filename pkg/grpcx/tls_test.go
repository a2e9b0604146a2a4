package grpcx_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit/tlstest"
)

func envOf(m map[string]string) config.Env {
	return config.Overlay(func(string) string { return "" }, m)
}

func TestTLSSettingsAreAllOrNothingAndMustLoad(t *testing.T) {
	f := tlstest.NewCA(t).Issue("svc")
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		env       map[string]string
		wantErr   string
		wantServe bool
		wantNil   bool
	}{
		{"none: plaintext", nil, "", false, true},
		{"the CA alone: a client", map[string]string{grpcx.EnvTLSCA: f.CA}, "", false, false},
		{"all three: serves and calls as a service", map[string]string{grpcx.EnvTLSCA: f.CA, grpcx.EnvTLSCert: f.Cert, grpcx.EnvTLSKey: f.Key}, "", true, false},
		{"a certificate without the CA", map[string]string{grpcx.EnvTLSCert: f.Cert, grpcx.EnvTLSKey: f.Key}, grpcx.EnvTLSCA, false, true},
		{"a certificate without its key", map[string]string{grpcx.EnvTLSCA: f.CA, grpcx.EnvTLSCert: f.Cert}, grpcx.EnvTLSKey, false, true},
		{"a CA file that holds no certificate", map[string]string{grpcx.EnvTLSCA: garbage}, "no PEM certificate", false, true},
		{"a missing CA file", map[string]string{grpcx.EnvTLSCA: garbage + ".missing"}, "no such file", false, true},
		{"a key that does not match", map[string]string{grpcx.EnvTLSCA: f.CA, grpcx.EnvTLSCert: f.Cert, grpcx.EnvTLSKey: garbage}, "certificate", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := grpcx.TLSFromEnv(envOf(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || (got == nil) != tc.wantNil || got.CanServe() != tc.wantServe {
				t.Fatalf("TLSFromEnv = %+v, %v", got, err)
			}
		})
	}
}

func TestATLSServerAnswersClientsThatTrustItsCAAndNoOtherClient(t *testing.T) {
	ca := tlstest.NewCA(t)
	f := ca.Issue("server")
	serverTLS, err := grpcx.LoadTLS(f.CA, f.Cert, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := grpcx.NewServer(grpcx.ServerOptions{Log: slog.New(slog.DiscardHandler), TLS: serverTLS})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	addr := lis.Addr().String()
	check := func(t *testing.T, opts []grpc.DialOption) error {
		t.Helper()
		conn, err := grpc.NewClient(addr, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	}
	clientOnly, err := grpcx.LoadTLS(f.CA, "", "")
	if err != nil {
		t.Fatal(err)
	}
	otherCA := tlstest.NewCA(t).Issue("stranger")
	stranger, err := grpcx.LoadTLS(otherCA.CA, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := check(t, grpcx.ClientOptions("", clientOnly)); err != nil {
		t.Fatalf("a client trusting the CA: %v", err)
	}
	if err := check(t, grpcx.ClientOptions("token", serverTLS)); err != nil {
		t.Fatalf("a service presenting its certificate: %v", err)
	}
	for name, opts := range map[string][]grpc.DialOption{
		"plaintext":              grpcx.ClientOptions("", nil),
		"a client of another CA": grpcx.ClientOptions("", stranger),
	} {
		if err := check(t, opts); status.Code(err) != codes.Unavailable {
			t.Errorf("%s: %v, want the connection refused", name, err)
		}
	}
	if _, err := grpcx.NewServer(grpcx.ServerOptions{TLS: clientOnly}); err == nil {
		t.Error("a server without a certificate started")
	}
}
