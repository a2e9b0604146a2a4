package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/gcpolicy"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/pkg/tracing"
)

// Main runs the process kind name: the garbage collector's policy (pkg/gcpolicy, unless GOGC or
// GOMEMLIMIT say otherwise), then every declared setting parsed from the environment — a bad or
// missing one stops the process with exit code 2 and one line per variable, before anything
// happens —, the logger at BERTH_LOG_LEVEL in BERTH_LOG_FORMAT (which decls must declare:
// logx.LevelSetting, logx.FormatSetting), tracing
// under name, and run with a context that ends on SIGINT or SIGTERM. A failing run exits 1.
func Main(name string, decls [][]config.Setting, run func(ctx context.Context, log *slog.Logger, settings config.Values) error) {
	gcpolicy.Configure(os.Getenv)
	settings, err := config.Parse(config.OS, decls...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: refusing to start, its settings are wrong:\n%v\n", name, err)
		os.Exit(2)
	}
	out := logx.NewOutput(os.Stderr)
	log := logx.NewFormat(out, settings.String(logx.LevelSetting.Name), settings.String(logx.FormatSetting.Name), logx.OnTerminal())
	if err := runTraced(name, log, settings, run); errors.As(err, new(*config.InvalidError)) {
		_ = out.Flush()
		fmt.Fprintf(os.Stderr, "%s: refusing to start, its settings are wrong:\n%v\n", name, err)
		os.Exit(2)
	} else if err != nil {
		log.Error(name+" stopped", "error", err.Error()) // an error flushes the output
		os.Exit(1)
	}
	_ = out.Flush()
}

func runTraced(name string, log *slog.Logger, settings config.Values, run func(context.Context, *slog.Logger, config.Values) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopTracing, err := tracing.Start(ctx, name)
	if err != nil {
		return err
	}
	defer stopTracing()
	return run(ctx, log, settings)
}

// ConnectBus connects to the NATS JetStream server at url ("" starts an embedded one, as the
// all-in-one does) and makes sure the streams exist. closeBus ends the connection (and the embedded
// server).
func ConnectBus(ctx context.Context, url, prefix string) (_ events.Bus, closeBus func(), err error) {
	var js jetstream.JetStream
	if url != "" {
		nc, err := natsx.Connect(url)
		if err != nil {
			return events.Bus{}, nil, fmt.Errorf("connect to NATS: %w", err)
		}
		closeBus = nc.Close
		js, err = jetstream.New(nc)
		if err != nil {
			closeBus()
			return events.Bus{}, nil, fmt.Errorf("JetStream: %w", err)
		}
	} else {
		emb, err := natsx.StartEmbedded("", "")
		if err != nil {
			return events.Bus{}, nil, fmt.Errorf("embedded NATS: %w", err)
		}
		closeBus = emb.Close
		if js, err = jetstream.New(emb.Conn); err != nil {
			closeBus()
			return events.Bus{}, nil, fmt.Errorf("JetStream: %w", err)
		}
	}
	bus := events.Bus{JS: js, Prefix: prefix}
	if err := bus.EnsureStreams(ctx); err != nil {
		closeBus()
		return events.Bus{}, nil, fmt.Errorf("ensure streams: %w", err)
	}
	return bus, closeBus, nil
}
