package httpsend_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/berthhq/berth/services/outbound/internal/adapters/httpsend"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

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
