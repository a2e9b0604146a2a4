package svcmain

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/natsx"
)

type fakeProcess struct {
	g      *grpc.Server
	runErr error
	closed bool
}

func (f *fakeProcess) GRPC() *grpc.Server        { return f.g }
func (f *fakeProcess) Run(context.Context) error { return f.runErr }
func (f *fakeProcess) Close()                    { f.closed = true }

func setup(t *testing.T) *slog.Logger {
	t.Helper()
	nats, err := natsx.StartEmbedded("", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nats.Close)
	t.Setenv("BERTH_NATS_URL", nats.Server.ClientURL())
	t.Setenv("BERTH_DATABASE_URL", "postgres://unused")
	t.Setenv("BERTH_GRPC_ADDR", "127.0.0.1:0")
	t.Setenv("BERTH_SERVICE_TOKEN", "svc")
	return slog.New(slog.NewJSONHandler(io.Discard, nil))
}

func TestProcessStopsCleanlyWhenItsBackgroundWorkEnds(t *testing.T) {
	log := setup(t)
	proc := &fakeProcess{g: grpc.NewServer()}
	var seen *Env
	err := run(log, "127.0.0.1:0", func(_ context.Context, env *Env) (Process, error) {
		seen = env
		if _, err := env.Dial("BERTH_PEER_ADDR", "127.0.0.1:1"); err != nil {
			return nil, err
		}
		return proc, nil
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !proc.closed {
		t.Fatal("process not closed")
	}
	if seen.ServiceToken != "svc" || seen.Bus.JS == nil || len(seen.conns) != 1 {
		t.Fatalf("env = %+v", seen)
	}
}

func TestProcessFailsWhenBackgroundWorkFails(t *testing.T) {
	log := setup(t)
	proc := &fakeProcess{g: grpc.NewServer(), runErr: errors.New("relay broke")}
	err := run(log, "127.0.0.1:0", func(context.Context, *Env) (Process, error) { return proc, nil })
	if err == nil || !strings.Contains(err.Error(), "relay broke") || !proc.closed {
		t.Fatalf("err = %v, closed = %v", err, proc.closed)
	}
}

func TestProcessRefusesToStartWithoutADatabase(t *testing.T) {
	log := setup(t)
	t.Setenv("BERTH_DATABASE_URL", "")
	built := false
	err := run(log, "127.0.0.1:0", func(context.Context, *Env) (Process, error) { built = true; return nil, nil })
	if err == nil || built {
		t.Fatalf("started without BERTH_DATABASE_URL: err = %v", err)
	}
}
