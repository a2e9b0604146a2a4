package natstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/natsx"
)

// New returns a Bus whose streams exist, and its connection. With TEST_NATS_URL the bus uses a prefix
// unique to this test, so tests sharing the server cannot see each other's streams or subjects, and
// the test's streams (with their consumers) are deleted in t.Cleanup. Otherwise each test gets an
// embedded server, shut down in t.Cleanup.
func New(t testing.TB) (events.Bus, *nats.Conn) {
	t.Helper()
	var conn *nats.Conn
	prefix := ""
	if url := os.Getenv("TEST_NATS_URL"); url != "" {
		c, err := natsx.Connect(url)
		if err != nil {
			t.Fatalf("natstest: %v", err)
		}
		conn = c
		prefix = "t" + randomHex(6)
	} else {
		e, err := natsx.StartEmbedded("", "")
		if err != nil {
			t.Fatalf("natstest: %v", err)
		}
		t.Cleanup(e.Close)
		conn = e.Conn
	}
	js, err := jetstream.New(conn)
	if err != nil {
		conn.Close()
		t.Fatalf("natstest: jetstream: %v", err)
	}
	bus := events.Bus{JS: js, Prefix: prefix}
	if prefix != "" {
		// Registered before EnsureStreams so that streams created before a failure are removed too.
		t.Cleanup(func() {
			deleteStreams(t, bus)
			conn.Close()
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.EnsureStreams(ctx); err != nil {
		t.Fatalf("natstest: %v", err)
	}
	return bus, conn
}

// DeleteStreamsAtCleanup deletes, when the test ends, the streams (with their consumers) of the
// bus prefix on the server at url: a test that runs whole processes against TEST_NATS_URL under
// a prefix of its own leaves nothing on the shared server. Register it before the processes'
// own cleanups, so that it runs after they stopped.
func DeleteStreamsAtCleanup(t testing.TB, url, prefix string) {
	t.Helper()
	t.Cleanup(func() {
		conn, err := natsx.Connect(url)
		if err != nil {
			t.Errorf("natstest: %v", err)
			return
		}
		defer conn.Close()
		js, err := jetstream.New(conn)
		if err != nil {
			t.Errorf("natstest: jetstream: %v", err)
			return
		}
		deleteStreams(t, events.Bus{JS: js, Prefix: prefix})
	})
}

func deleteStreams(t testing.TB, bus events.Bus) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range bus.Streams() {
		if err := bus.JS.DeleteStream(ctx, name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			t.Errorf("natstest: delete stream %s: %v", name, err)
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
