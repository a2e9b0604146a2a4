package natsx_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/berthhq/berth/pkg/natsx"
)

// roundTrip stores a message in a stream and reads it back, proving JetStream works over conn.
func roundTrip(t *testing.T, conn *nats.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(conn)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PROBE", Subjects: []string{"probe.>"}, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "probe.one", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	msg, err := s.GetLastMsgForSubject(ctx, "probe.one")
	if err != nil {
		t.Fatal(err)
	}
	if string(msg.Data) != "hello" {
		t.Fatalf("stored %q, want hello", msg.Data)
	}
}

func TestEmbeddedInProcessRunsJetStreamAndCleansUp(t *testing.T) {
	e, err := natsx.StartEmbedded("", "")
	if err != nil {
		t.Fatal(err)
	}
	storeDir := e.Server.StoreDir()
	roundTrip(t, e.Conn)
	if e.Server.Addr() != nil {
		t.Fatalf("server listens on %v, want no listener", e.Server.Addr())
	}

	e.Close()
	if !e.Conn.IsClosed() {
		t.Fatal("connection still open after Close")
	}
	if e.Server.Running() {
		t.Fatal("server still running after Close")
	}
	if _, err := os.Stat(storeDir); !os.IsNotExist(err) {
		t.Fatalf("temporary store dir %s not removed: %v", storeDir, err)
	}
}

func TestEmbeddedListensAndKeepsACallerStoreDir(t *testing.T) {
	dir := t.TempDir()
	e, err := natsx.StartEmbedded(dir, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := natsx.Connect(e.Server.ClientURL())
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	roundTrip(t, conn)
	conn.Close()
	e.Close()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("caller's store dir removed: %v", err)
	}
}

func TestStartEmbeddedRejectsBadListenAddress(t *testing.T) {
	for _, listen := range []string{"127.0.0.1", "127.0.0.1:http", "127.0.0.1:70000"} {
		if e, err := natsx.StartEmbedded("", listen); err == nil {
			e.Close()
			t.Errorf("StartEmbedded(%q) succeeded, want an error", listen)
		}
	}
}

func TestConnectReportsUnreachableServer(t *testing.T) {
	if conn, err := natsx.Connect("nats://127.0.0.1:1"); err == nil {
		conn.Close()
		t.Fatal("Connect to a closed port succeeded")
	}
}

func TestServerURLSettingsAcceptOneURLOrACommaSeparatedCluster(t *testing.T) {
	for v, ok := range map[string]bool{
		"nats://127.0.0.1:4222":                  true,
		"nats://a:4222, nats://b:4222,tls://c:1": true,
		"127.0.0.1:4222":                         false,
		"nats://a:4222,,nats://b:4222":           false,
		"nats://":                                false,
	} {
		if err := natsx.CheckServers(v); (err == nil) != ok {
			t.Errorf("CheckServers(%q) = %v, want ok %v", v, err, ok)
		}
	}
}
