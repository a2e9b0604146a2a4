package sandboxproc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/testkit/procs"
)

// The sandbox's paths under its address, as docs/billing.md publishes them.
const (
	pspxPath       = "/_sandbox/pspx"
	pspyPath       = "/_sandbox/pspy"
	idpPath        = "/_sandbox/idp"
	clockPath      = "/_sandbox/clock/advance"
	deliveriesPath = "/_sandbox/deliveries"
)

// maxDeliveries is the most entries the deliveries log answers at once.
const maxDeliveries = 1000

// startTimeout bounds building the binary and waiting for it to be ready.
const startTimeout = 2 * time.Minute

// Sandbox is the package's sandbox process as one test sees it: its URLs and controls, failing
// that test when a call does not succeed.
type Sandbox struct {
	PspxURL string // pspx's API base URL, for a pspx client's BaseURL
	PspyURL string // pspy's
	// IdpURL is the OpenID Connect providers' base URL: provider P's issuer is IdpURL + "/" + P.
	// Each test names providers of its own (such as "idpA-" plus a random suffix) to keep its
	// clients, faults and keys apart from the other tests'.
	IdpURL string
	base   string
	hooks  string // the webhook receiver's URL
	t      testing.TB
	serial bool // the test runs alone and may move the clock
}

// Delivery is one webhook in the sandbox's deliveries log (GET /_sandbox/deliveries): what it is
// about and where it goes, which tell a test's deliveries apart.
type Delivery struct {
	EventID   string `json:"eventId"`   // pspx: the event delivered
	PaymentID string `json:"paymentId"` // pspy: the payment the notification names
	URL       string `json:"url"`
}

// the process, started once per test binary.
var (
	mu       sync.Mutex
	inMain   bool // Main is running the tests, so it will stop what they start
	once     sync.Once
	started  *process
	startErr error
)

type process struct {
	dir   string
	proc  *procs.Process
	hooks *httptest.Server
	base  string
}

// Main runs the package's tests and then stops the sandbox process if a test started it. A
// package that uses Parallel or Serial calls it from TestMain.
func Main(m *testing.M) {
	mu.Lock()
	inMain = true
	mu.Unlock()
	code := m.Run()
	mu.Lock()
	if started != nil {
		started.proc.Stop()
		started.hooks.Close()
		_ = os.RemoveAll(started.dir)
	}
	mu.Unlock()
	os.Exit(code)
}

// Parallel marks t parallel and answers the sandbox; t must not move the clock (Advance fails it).
func Parallel(t *testing.T) *Sandbox {
	t.Helper()
	t.Parallel()
	return join(t, false)
}

// Serial answers the sandbox to a test that may move its clock. The test must be a top-level test
// that never calls t.Parallel: then no other test of the package runs while it does (see the
// package comment).
func Serial(t *testing.T) *Sandbox {
	t.Helper()
	return join(t, true)
}

func join(t *testing.T, serial bool) *Sandbox {
	t.Helper()
	mu.Lock()
	ok := inMain
	mu.Unlock()
	if !ok {
		t.Fatal("sandboxproc: the package needs func TestMain(m *testing.M) { sandboxproc.Main(m) }, which stops the sandbox process after the tests")
	}
	once.Do(func() {
		p, err := start()
		mu.Lock()
		started, startErr = p, err
		mu.Unlock()
	})
	if startErr != nil {
		t.Fatal(startErr)
	}
	return &Sandbox{PspxURL: started.base + pspxPath, PspyURL: started.base + pspyPath, IdpURL: started.base + idpPath, base: started.base, hooks: started.hooks.URL, t: t, serial: serial}
}

// start builds the sandbox binary into a folder of its own, starts it on a free loopback port
// with the providers' own webhook retry pace, and waits until it answers /readyz; beside it runs
// the receiver behind WebhookURL.
func start() (*process, error) {
	root, err := procs.RepoRoot()
	if err != nil {
		return nil, fmt.Errorf("sandboxproc: %w", err)
	}
	dir, err := os.MkdirTemp("", "sandboxproc-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*process, error) {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("sandboxproc: %w", err)
	}
	bin, err := procs.Build(root, dir, "./services/sandbox/cmd/sandbox")
	if err != nil {
		return fail(err)
	}
	addrs, err := procs.FreeAddrs(1)
	if err != nil {
		return fail(err)
	}
	proc, err := procs.Start("sandbox", bin, dir, map[string]string{"BERTH_SANDBOX_ADDR": addrs[0]})
	if err != nil {
		return fail(err)
	}
	base := "http://" + addrs[0]
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := proc.WaitReady(startTimeout, 20*time.Millisecond, procs.HTTPOK(ctx, base+"/readyz")); err != nil {
		proc.Stop()
		return fail(err)
	}
	// Every webhook a test points here is delivered at once, so nothing is retried or leaves
	// the machine; the path tells the test's deliveries apart.
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	return &process{dir: dir, proc: proc, hooks: hooks, base: base}, nil
}

// Account answers a token no other call answers, to make secret keys of: each key is an account
// of its own at both sandboxes (sk_test_<token> at pspx, test_<token> at pspy), invisible to the
// others.
func (s *Sandbox) Account() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 20)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// WebhookURL answers a URL no other call answers, on a loopback receiver that answers every
// delivery 204: the providers' webhooks to it succeed at once, and the deliveries log tells the
// test's own by their URL.
func (s *Sandbox) WebhookURL() string {
	return s.hooks + "/hooks/" + s.Account()
}

// Now is the sandbox clock's time (GET /_sandbox/clock/advance), to the second.
func (s *Sandbox) Now() time.Time {
	s.t.Helper()
	return s.clock(http.MethodGet, nil)
}

// Advance moves the sandbox clock on by d, rounded up to whole seconds, and answers the new time
// once the work that fell due (renewals, settlements) is done. Only a Serial test may.
func (s *Sandbox) Advance(d time.Duration) time.Time {
	s.t.Helper()
	if !s.serial {
		s.t.Fatal("sandboxproc: a test that moves the sandbox clock must join with Serial: the clock is every test's")
	}
	body, _ := json.Marshal(map[string]float64{"seconds": math.Ceil(d.Seconds())})
	return s.clock(http.MethodPost, body)
}

func (s *Sandbox) clock(method string, body []byte) time.Time {
	s.t.Helper()
	var out struct{ Now time.Time }
	s.call(method, clockPath, body, &out)
	return out.Now
}

// Deliveries is the deliveries log of provider ("pspx" or "pspy"), oldest first: every webhook
// the provider has queued, to any test's URL, delivered or not.
func (s *Sandbox) Deliveries(provider string) []Delivery {
	s.t.Helper()
	var out struct{ Deliveries []Delivery }
	q := url.Values{"provider": {provider}, "limit": {strconv.Itoa(maxDeliveries)}}
	s.call(http.MethodGet, deliveriesPath+"?"+q.Encode(), nil, &out)
	if len(out.Deliveries) == maxDeliveries {
		// The log answers the newest entries; a test comparing two reads would miss the oldest.
		s.t.Fatalf("sandboxproc: the %s deliveries log holds %d entries or more, more than one read answers", provider, maxDeliveries)
	}
	// The log is newest first; oldest first, a later read extends an earlier one.
	slices.Reverse(out.Deliveries)
	return out.Deliveries
}

// call makes a control request and decodes its JSON answer into out, failing the test unless it
// answers 200.
func (s *Sandbox) call(method, path string, body []byte, out any) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("sandboxproc: %s %s: %v", method, path, err)
	}
	defer func() { _ = res.Body.Close() }()
	answer, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = errors.New(res.Status + ": " + strings.TrimSpace(string(answer)))
	}
	if err == nil {
		err = json.Unmarshal(answer, out)
	}
	if err != nil {
		s.t.Fatalf("sandboxproc: %s %s: %v", method, path, err)
	}
}
