package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/billing/server"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestARestartWithAnotherSecretKeyIsRefusedNamingTheVariable protects the provider secrets billing
// sealed: a restart with the same BERTH_SECRET_KEY starts, one with another stops as a bad setting
// does, naming the variable, instead of failing every checkout with a 500.
func TestARestartWithAnotherSecretKeyIsRefusedNamingTheVariable(t *testing.T) {
	// Never dialled: building the process only needs the connections to exist.
	peer, err := grpc.NewClient("127.0.0.1:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = peer.Close() }()
	cfg := server.Config{
		Common: module.Common{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), AdminToken: "admin", ServiceToken: "service",
			DatabaseURL: pgtest.URL(t, "billing-server", func(context.Context, *pgxpool.Pool) error { return nil })},
		SecretKey: bytes.Repeat([]byte{1}, 32), Identity: peer, Tenant: peer, PublicURL: "https://berth.test",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 2 {
		p, err := server.New(ctx, cfg)
		if err != nil {
			t.Fatalf("start with the same key: %v", err)
		}
		p.Close()
	}
	cfg.SecretKey = bytes.Repeat([]byte{2}, 32)
	p, err := server.New(ctx, cfg)
	if err == nil {
		p.Close()
		t.Fatal("started with another secret key")
	}
	var invalid *config.InvalidError
	if !errors.As(err, &invalid) || !strings.HasPrefix(err.Error(), "BERTH_SECRET_KEY (secret): does not match the key this database was sealed with") {
		t.Fatalf("another key: %v, want the settings refusal naming BERTH_SECRET_KEY", err)
	}
}
