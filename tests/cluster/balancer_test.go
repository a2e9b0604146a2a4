package cluster

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// balancer is a TCP (layer 4) round-robin balancer in front of the edges, as a cloud load
// balancer or a Kubernetes Service is: each client connection goes to the next edge that accepts
// it, so an edge that is down gets no new connections, and the connections it held break.
type balancer struct {
	ln       net.Listener
	backends []string
	next     atomic.Uint64
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
}

func newBalancer(backends []string) (*balancer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &balancer{ln: ln, backends: backends, conns: map[net.Conn]struct{}{}}
	b.wg.Go(b.serve)
	return b, nil
}

func (b *balancer) url() string { return "http://" + b.ln.Addr().String() }

func (b *balancer) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.wg.Go(func() { b.proxy(c) })
	}
}

// proxy connects c to the next edge that answers, trying each edge once.
func (b *balancer) proxy(c net.Conn) {
	start := b.next.Add(1)
	var up net.Conn
	for i := range uint64(len(b.backends)) {
		var err error
		if up, err = net.DialTimeout("tcp", b.backends[(start+i)%uint64(len(b.backends))], time.Second); err == nil {
			break
		}
	}
	if up == nil {
		_ = c.Close()
		return
	}
	if !b.track(c, up) {
		return
	}
	defer b.untrack(c, up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done // either side ended: end both, as a balancer does when a backend dies
}

func (b *balancer) track(cs ...net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conns == nil { // closed
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	for _, c := range cs {
		b.conns[c] = struct{}{}
	}
	return true
}

func (b *balancer) untrack(cs ...net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
		delete(b.conns, c)
	}
}

func (b *balancer) close() {
	_ = b.ln.Close()
	b.mu.Lock()
	for c := range b.conns {
		_ = c.Close()
	}
	b.conns = nil
	b.mu.Unlock()
	b.wg.Wait()
}
