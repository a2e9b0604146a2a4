package events_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// natsOutage is how long the server is down; BERTH_FAULT_NATS_OUTAGE sets it (the fault table's
// figures in docs/operations.md use 30s), the default keeps make test short.
func natsOutage(t *testing.T) time.Duration {
	if v := os.Getenv("BERTH_FAULT_NATS_OUTAGE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("BERTH_FAULT_NATS_OUTAGE: %v", err)
		}
		return d
	}
	return 3 * time.Second
}

// With the NATS server down, services keep writing: their events wait in the outbox. Once it is
// back, the relay publishes them and the durable consumer applies each exactly once, none lost.
func TestEventsWrittenWhileNATSIsDownAreDeliveredOnceWhenItReturns(t *testing.T) {
	ctx := context.Background()
	pool := pgPool(t)
	dir := t.TempDir()
	srv, err := natsx.StartEmbedded(filepath.Join(dir, "js"), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := srv.Server.ClientURL()
	conn, err := natsx.Connect(url) // a service's connection: reconnects without limit
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	js, err := jetstream.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	bus := events.Bus{JS: js, Prefix: "outage"}
	if err := bus.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	const consumer = "outage-projection"
	c, err := bus.Consume(ctx, events.ConsumerConfig{
		Durable: consumer, Types: []eventsv1.Type{identityv1.EventUserUpdated}, Inbox: events.NewPGInbox(pool), Log: quiet,
		Handler: func(ctx context.Context, ev events.Event) error {
			_, err := pgxx.Q(ctx, pool).Exec(ctx, "insert into effect (consumer, event_id) values ($1, $2)", consumer, ev.ID)
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	runCtx, stopRelay := context.WithCancel(ctx)
	relayDone := make(chan error, 1)
	go func() { relayDone <- events.NewRelay("outage", events.NewPGOutbox(pool), bus, quiet).Run(runCtx) }()
	defer func() {
		stopRelay()
		if err := <-relayDone; err != nil {
			t.Errorf("the relay ended with %v, want nil once its context ends", err)
		}
	}()

	applied := func() (n, distinct int) {
		if err := pool.QueryRow(ctx, "select count(*), count(distinct event_id) from effect").Scan(&n, &distinct); err != nil {
			t.Fatal(err)
		}
		return n, distinct
	}
	write := func(from, n int) {
		for i := from; i < from+n; i++ {
			createAccount(t, pool, fmt.Sprintf("acct-%d", i))
		}
	}

	write(0, 20)
	testkit.Eventually(t, "the first 20 events are applied", func() bool { n, _ := applied(); return n == 20 })

	srv.Close() // the server goes away; its store dir stays
	outage := natsOutage(t)
	began := time.Now()
	write(20, 50) // the services' writes go on: each commits with its event in the outbox
	time.Sleep(outage - time.Since(began))
	if n, _ := applied(); n != 20 {
		t.Fatalf("%d effects while NATS was down, want the 20 from before", n)
	}
	back, err := natsx.StartEmbedded(filepath.Join(dir, "js"), url[len("nats://"):])
	if err != nil {
		t.Fatalf("restart NATS on %s: %v", url, err)
	}
	defer back.Close()
	returned := time.Now()
	testkit.Eventually(t, "every event written during the outage is applied", func() bool { n, _ := applied(); return n >= 70 })
	t.Logf("NATS down %s; the 50 events written meanwhile were all applied %s after it returned", outage.Round(time.Millisecond), time.Since(returned).Round(time.Millisecond))
	time.Sleep(500 * time.Millisecond) // a redelivery would land now
	if n, distinct := applied(); n != 70 || distinct != 70 {
		t.Fatalf("%d effects of %d events, want 70 of 70: none lost, none twice", n, distinct)
	}
	var pending int
	if err := pool.QueryRow(ctx, "select count(*) from outbox where published_at is null").Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Fatalf("%d events still wait in the outbox", pending)
	}
}
