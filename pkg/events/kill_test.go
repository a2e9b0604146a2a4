package events_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/natsx"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// The consumer process of TestAConsumerKilledMidBatchLosesAndRepeatsNoEvent runs this test in a
// child process: it applies events until the victim, whose effect it writes in the inbox's open
// transaction, then says so and waits to be killed.
const (
	killChildEnv  = "EVENTS_KILL_CHILD"
	killNATSEnv   = "EVENTS_KILL_NATS_URL"
	killDBEnv     = "EVENTS_KILL_DATABASE_URL"
	killVictimEnv = "EVENTS_KILL_VICTIM"
	killBatchEnv  = "EVENTS_KILL_BATCH"
	killDurable   = "kill-projection"
	killPrefix    = "killtest"
	killAckWait   = 2 * time.Second
)

func killConsumer(ctx context.Context, bus events.Bus, pool *pgxpool.Pool, batch int, onEffect func(ev events.Event) error) (*events.Consumer, error) {
	return bus.Consume(ctx, events.ConsumerConfig{
		Durable: killDurable, Types: []eventsv1.Type{identityv1.EventUserUpdated}, Inbox: events.NewPGInbox(pool), AckWait: killAckWait,
		Batch: batch,
		Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler: func(ctx context.Context, ev events.Event) error {
			if _, err := pgxx.Q(ctx, pool).Exec(ctx, "insert into effect (consumer, event_id) values ($1, $2)", killDurable, ev.ID); err != nil {
				return err
			}
			return onEffect(ev)
		},
	})
}

func TestKilledConsumerProcess(t *testing.T) {
	if os.Getenv(killChildEnv) != "1" {
		t.Skip("the consumer process of TestAConsumerKilledMidBatchLosesAndRepeatsNoEvent")
	}
	ctx := context.Background()
	conn, err := natsx.Connect(os.Getenv(killNATSEnv))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, os.Getenv(killDBEnv))
	if err != nil {
		t.Fatal(err)
	}
	victim := os.Getenv(killVictimEnv)
	batch, _ := strconv.Atoi(os.Getenv(killBatchEnv))
	if _, err := killConsumer(ctx, events.Bus{JS: js, Prefix: killPrefix}, pool, batch, func(ev events.Event) error {
		if ev.ID == victim {
			fmt.Println("stuck") // the victim's effect is written, its transaction open, its ack not sent
			select {}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	select {}
}

// A consumer process killed (SIGKILL) in the middle of a pulled batch, with an effect written and
// not committed: the database rolls that transaction back, the server delivers every unacknowledged
// event again after the ack wait, and a new consumer on the same durable applies each of them once.
// Applying one event per transaction, the nine before the victim were committed; applying
// batches, the victim's whole batch rolls back with it.
func TestAConsumerKilledMidBatchLosesAndRepeatsNoEvent(t *testing.T) {
	for _, batch := range []int{1, 8} {
		t.Run(fmt.Sprintf("batch %d", batch), func(t *testing.T) { testKilledConsumer(t, batch) })
	}
}

func testKilledConsumer(t *testing.T, batch int) {
	ctx := context.Background()
	pool := pgPool(t)
	srv, err := natsx.StartEmbedded(filepath.Join(t.TempDir(), "js"), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	js, err := jetstream.New(srv.Conn)
	if err != nil {
		t.Fatal(err)
	}
	bus := events.Bus{JS: js, Prefix: killPrefix}
	if err := bus.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	var evs []events.Event
	for i := range 30 {
		ev := newEvent(t, identityv1.EventUserUpdated, fmt.Sprintf("u%d", i))
		publish(t, bus, ev)
		evs = append(evs, ev)
	}

	child := exec.Command(os.Args[0], "-test.run=^TestKilledConsumerProcess$", "-test.v")
	child.Env = append(os.Environ(), killChildEnv+"=1", killNATSEnv+"="+srv.Server.ClientURL(),
		killDBEnv+"="+pool.Config().ConnString(), killVictimEnv+"="+evs[9].ID, killBatchEnv+"="+strconv.Itoa(batch))
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	stuck := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "stuck" {
				close(stuck)
			}
		}
	}()
	select {
	case <-stuck:
	case <-time.After(30 * time.Second):
		_ = child.Process.Kill()
		t.Fatal("the consumer process never reached the victim event")
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	counts := func() (n, distinct int) {
		if err := pool.QueryRow(ctx, "select count(*), count(distinct event_id) from effect").Scan(&n, &distinct); err != nil {
			t.Fatal(err)
		}
		return n, distinct
	}
	switch n, _ := counts(); {
	case batch == 1 && n != 9:
		t.Fatalf("%d effects committed before the kill, want the 9 before the victim", n)
	case n > 9:
		t.Fatalf("%d effects committed before the kill, want at most the 9 before the victim", n)
	}
	c, err := killConsumer(ctx, bus, pool, batch, func(events.Event) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	testkit.Eventually(t, "every event is applied after the kill", func() bool { n, _ := counts(); return n >= 30 })
	time.Sleep(killAckWait + time.Second) // a second delivery of anything would land now
	if n, distinct := counts(); n != 30 || distinct != 30 {
		t.Fatalf("%d effects of %d events, want 30 of 30", n, distinct)
	}
}
