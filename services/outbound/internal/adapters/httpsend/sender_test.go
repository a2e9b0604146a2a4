package httpsend_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/berthhq/berth/services/outbound/internal/adapters/httpsend"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

func TestTheGuardRefusesEveryInternalRange(t *testing.T) {
	tests := []struct {
		addr    string
		refused bool
	}{
		{"0.0.0.0", true},          // unspecified / this network
		{"10.1.2.3", true},         // private
		{"100.64.0.1", true},       // carrier-grade NAT
		{"127.0.0.1", true},        // loopback
		{"127.255.255.254", true},  // loopback, the whole /8
		{"169.254.169.254", true},  // link-local: the cloud metadata service
		{"172.16.0.1", true},       // private
		{"172.31.255.255", true},   // private, the range's end
		{"192.0.0.1", true},        // IETF protocol assignments
		{"192.0.2.1", true},        // documentation
		{"192.168.1.1", true},      // private
		{"198.18.0.1", true},       // benchmarking
		{"198.51.100.7", true},     // documentation
		{"203.0.113.9", true},      // documentation
		{"224.0.0.1", true},        // multicast
		{"239.255.255.250", true},  // multicast (SSDP)
		{"240.0.0.1", true},        // reserved
		{"255.255.255.255", true},  // broadcast
		{"::", true},               // unspecified
		{"::1", true},              // loopback
		{"::ffff:127.0.0.1", true}, // IPv4-mapped loopback
		{"::ffff:169.254.169.254", true},
		{"64:ff9b::a9fe:a9fe", true}, // NAT64 of the metadata address
		{"fc00::1", true},            // unique local
		{"fd12:3456::1", true},       // unique local
		{"fe80::1", true},            // link-local
		{"ff02::1", true},            // multicast
		{"2001:db8::1", true},        // documentation
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"172.32.0.1", false}, // just past 172.16/12
		{"100.128.0.1", false},
		{"2606:4700:4700::1111", false},
	}
	for _, tc := range tests {
		if got := httpsend.Refused(netip.MustParseAddr(tc.addr)); got != tc.refused {
			t.Errorf("Refused(%s) = %v, want %v", tc.addr, got, tc.refused)
		}
	}
}

func hits(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { n.Add(1) }))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestProductionRefusesLoopbackWhenConnectingWhateverTheNameResolvesTo(t *testing.T) {
	srv, n := hits(t)
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	s := httpsend.New(false)
	// By address, and by a name that resolves to loopback, as a rebinding name would at connect time.
	for _, url := range []string{srv.URL, "http://localhost" + port + "/"} {
		a := s.Send(context.Background(), url, nil, []byte("{}"))
		if a.Status != 0 || !strings.Contains(a.Error, "refused address") {
			t.Errorf("%s: status %d, error %q; want a refused address", url, a.Status, a.Error)
		}
	}
	if n.Load() != 0 {
		t.Errorf("the loopback receiver got %d requests", n.Load())
	}
	// The all-in-one's setting reaches it.
	if a := httpsend.New(true).Send(context.Background(), srv.URL, nil, []byte("{}")); a.Status != http.StatusOK {
		t.Errorf("with private addresses allowed: %+v", a)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	target, n := hits(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	a := httpsend.New(true).Send(context.Background(), redirect.URL, nil, []byte("{}"))
	if a.Status != http.StatusTemporaryRedirect || a.Succeeded() {
		t.Errorf("attempt %+v, want the 307 recorded as a failure", a)
	}
	if n.Load() != 0 {
		t.Error("the redirect's target was called")
	}
}

func TestSendSendsHeadersAndBodyAndKeeps64KiBOfTheAnswer(t *testing.T) {
	var gotHeader, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader = r.Header.Get("Webhook-Id")
		b := make([]byte, 10)
		n, _ := r.Body.Read(b)
		gotBody = string(b[:n])
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(strings.Repeat("y", 200<<10)))
	}))
	t.Cleanup(srv.Close)
	a := httpsend.New(true).Send(context.Background(), srv.URL, map[string]string{"Webhook-Id": "abc"}, []byte(`{"a":1}`))
	if a.Status != http.StatusAccepted || gotHeader != "abc" || gotBody != `{"a":1}` {
		t.Errorf("attempt %d, header %q, body %q", a.Status, gotHeader, gotBody)
	}
	if len(a.Response) != domain.MaxResponseBytes {
		t.Errorf("kept %d bytes of the answer, want %d", len(a.Response), domain.MaxResponseBytes)
	}
}
