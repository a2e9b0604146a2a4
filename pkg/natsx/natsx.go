package natsx

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// startTimeout bounds how long StartEmbedded waits for the server; it normally needs tens of
// milliseconds, so hitting it means something is wrong (a port in use, an unwritable store dir).
const startTimeout = 10 * time.Second

// Embedded is an in-process NATS server with JetStream and a client connection to it.
type Embedded struct {
	Server *server.Server
	Conn   *nats.Conn

	removeDir string // the temporary store dir StartEmbedded created, "" when the caller gave one
}

// StartEmbedded starts an in-process nats-server with JetStream and connects to it. dir is the
// JetStream store dir ("" = a new temporary dir, removed on Close). listen "" keeps the server off the
// network (the connection is in-process); "host:port" makes it listen for other processes too, with
// port 0 meaning a free port (see Server.ClientURL).
func StartEmbedded(dir, listen string) (*Embedded, error) {
	e := &Embedded{}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "berth-nats-")
		if err != nil {
			return nil, fmt.Errorf("natsx: create store dir: %w", err)
		}
		dir, e.removeDir = tmp, tmp
	}
	opts := &server.Options{
		ServerName: "berth-embedded",
		JetStream:  true,
		StoreDir:   filepath.Clean(dir),
		NoLog:      true,
		NoSigs:     true, // the host process owns signal handling
		DontListen: listen == "",
	}
	if listen != "" {
		host, portText, err := net.SplitHostPort(listen)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("natsx: listen address %q: %w", listen, err)
		}
		port, err := strconv.Atoi(portText)
		if err != nil || port < 0 || port > 65535 {
			e.Close()
			return nil, fmt.Errorf("natsx: listen address %q: bad port", listen)
		}
		if port == 0 {
			port = server.RANDOM_PORT // nats-server reads 0 as "the default port 4222"
		}
		opts.Host, opts.Port = host, port
	}

	srv, err := server.NewServer(opts)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("natsx: configure server: %w", err)
	}
	e.Server = srv
	srv.Start()
	if !srv.ReadyForConnections(startTimeout) {
		e.Close()
		return nil, errors.New("natsx: embedded server not ready in time")
	}
	if !srv.JetStreamEnabled() {
		e.Close()
		return nil, errors.New("natsx: embedded server started without JetStream")
	}
	conn, err := nats.Connect("", nats.InProcessServer(srv), nats.Name(clientName()))
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("natsx: connect to embedded server: %w", err)
	}
	e.Conn = conn
	return e, nil
}

// Close closes the connection, shuts the server down, waits for it, and removes a temporary store dir.
func (e *Embedded) Close() {
	if e.Conn != nil {
		e.Conn.Close()
	}
	if e.Server != nil {
		e.Server.Shutdown()
		e.Server.WaitForShutdown()
	}
	if e.removeDir != "" {
		_ = os.RemoveAll(e.removeDir)
	}
}

// CheckServers is the rule of a NATS URL setting: one server URL, or several separated by commas
// (the members of a cluster), each absolute.
func CheckServers(v string) error {
	for _, s := range strings.Split(v, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Scheme == "" || u.Host == "" {
			return errors.New("must be NATS server URLs (nats://host:port), separated by commas")
		}
	}
	return nil
}

// Connect dials an external NATS server. The first connection attempt is bounded so a wrong URL fails
// start-up quickly; once connected, the client reconnects without limit, because a NATS restart or a
// cluster node change must not take a healthy service down.
func Connect(url string) (*nats.Conn, error) {
	conn, err := nats.Connect(url,
		nats.Name(clientName()),
		nats.Timeout(5*time.Second),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
	)
	if err != nil {
		return nil, fmt.Errorf("natsx: connect: %w", err)
	}
	return conn, nil
}

// clientName names connections after the program, so server monitoring shows which service is which.
func clientName() string {
	return "berth/" + filepath.Base(os.Args[0])
}
