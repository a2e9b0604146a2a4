package host_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/host"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/pkg/ops"
)

// recorder notes what the probe modules saw while the host built them.
type recorder struct {
	mu       sync.Mutex
	dialed   []string // "<module>-><peer>"
	settings map[string]string
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dialed = append(r.dialed, s)
}

// probe is a module that dials its peers while it is built and records its own setting.
func probe(r *recorder, name string, peers ...string) module.Module {
	return module.Module{Name: name, DefaultAddr: "127.0.0.1:0", Peers: peers,
		Settings: []config.Setting{{Name: "BERTH_PROBE", Kind: config.Text, Doc: "a probe's own setting"}},
		Build: func(_ context.Context, c module.Common) (*module.Process, error) {
			for _, p := range peers {
				if _, err := c.Dial(p); err != nil {
					return nil, err
				}
				r.note(name + "->" + p)
			}
			r.mu.Lock()
			r.settings[name] = c.Settings.String("BERTH_PROBE")
			r.mu.Unlock()
			return module.NewProcess(c, name, authn.Policy{})
		}}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func settingsOf(t *testing.T, value string) config.Values {
	t.Helper()
	v, err := config.Parse(func(string) string { return value }, []config.Setting{{Name: "BERTH_PROBE", Kind: config.Text}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func get(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

func TestModulesOfOneHostDialEachOtherWhateverTheirOrderAndOthersThroughRemote(t *testing.T) {
	r := &recorder{settings: map[string]string{}}
	var remote []string
	unreachable := errors.New("unreachable")
	_, err := host.Start(context.Background(), []module.Module{probe(r, "first", "second", "elsewhere"), probe(r, "second", "first")}, host.Options{
		Log:       quiet(),
		Settings:  map[string]config.Values{"first": settingsOf(t, "one"), "second": settingsOf(t, "two")},
		InProcess: true, OpsAddr: "127.0.0.1:0",
		Remote: func(name string, service bool) (grpc.ClientConnInterface, error) {
			remote = append(remote, name)
			if !service {
				t.Errorf("a module dialled %s without the service token", name)
			}
			return nil, unreachable
		},
	})
	if !errors.Is(err, unreachable) {
		t.Fatalf("Start = %v, want the failing Remote dial's error", err)
	}
	if !slices.Equal(remote, []string{"elsewhere"}) {
		t.Fatalf("Remote dialled %v, want only the module outside the process", remote)
	}

	r = &recorder{settings: map[string]string{}}
	h, err := host.Start(context.Background(), []module.Module{probe(r, "first", "second"), probe(r, "second", "first")}, host.Options{
		Log: quiet(), Settings: map[string]config.Values{"first": settingsOf(t, "one"), "second": settingsOf(t, "two")}, OpsAddr: "127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if !slices.Equal(r.dialed, []string{"first->second", "second->first"}) {
		t.Errorf("dialled %v: the first module must reach the second before the second is built", r.dialed)
	}
	if r.settings["first"] != "one" || r.settings["second"] != "two" {
		t.Errorf("modules got settings %v, want each its own", r.settings)
	}
	for name, addr := range h.Addrs {
		if _, _, err := net.SplitHostPort(addr); err != nil || addr == "127.0.0.1:0" {
			t.Errorf("%s serves on %q, not a bound address", name, addr)
		}
	}
}

// site is a web module that records what the host did with its site, in order.
func site(r *recorder, name string) module.Module {
	return module.Module{Name: name, Web: func(_ context.Context, c module.Common) (*module.Site, error) {
		if _, err := c.Forward("only"); err != nil {
			return nil, err
		}
		if _, err := c.Dial("missing"); err == nil {
			return nil, errors.New("a module neither here nor Remote was dialled")
		}
		r.note(name + " base " + c.BaseURL)
		return &module.Site{
			Register: func(mux *http.ServeMux) {
				mux.HandleFunc("/"+name, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
			},
			Front: func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					w.Header().Add("X-Front", name)
					next.ServeHTTP(w, req)
				})
			},
			Listener: func(l net.Listener) net.Listener { r.note(name + " wraps the listener"); return l },
			Stop:     func() { r.note(name + " stopped") },
		}, nil
	}}
}

func TestSitesShareTheHTTPListenerWithTheOpsEndpointsAndStopAfterItClosesInReverseOrder(t *testing.T) {
	r := &recorder{settings: map[string]string{}}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + lis.Addr().String()
	h, err := host.Start(context.Background(), []module.Module{probe(r, "only"), site(r, "a"), site(r, "b")}, host.Options{
		Log: quiet(), Settings: map[string]config.Values{"only": settingsOf(t, "")}, HTTPListener: lis,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/a", "/b"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusTeapot {
			t.Errorf("%s answered %d, want the site's 418", path, res.StatusCode)
		}
		// The later site wraps the earlier one's front: it sees the request first.
		if got := res.Header.Values("X-Front"); !slices.Equal(got, []string{"b", "a"}) {
			t.Errorf("%s passed the fronts %v, want [b a]", path, got)
		}
	}
	if code := get(t, base+ops.HealthPath); code != http.StatusOK {
		t.Errorf("%s on the HTTP listener = %d", ops.HealthPath, code)
	}
	h.Close()
	if _, err := http.Get(base + "/a"); err == nil {
		t.Error("the HTTP server still answers after Close")
	}
	want := []string{"a base " + base, "b base " + base, "a wraps the listener", "b wraps the listener", "b stopped", "a stopped"}
	if !slices.Equal(r.dialed, want) {
		t.Errorf("the host did %q, want %q", r.dialed, want)
	}
}

func TestAModuleWithASiteNeedsAnHTTPListener(t *testing.T) {
	r := &recorder{settings: map[string]string{}}
	_, err := host.Start(context.Background(), []module.Module{probe(r, "only"), site(r, "a")}, host.Options{
		Log: quiet(), Settings: map[string]config.Values{"only": settingsOf(t, "")},
	})
	if err == nil || !strings.Contains(err.Error(), "a serves HTTP") {
		t.Fatalf("Start = %v, want the site's module named for lacking an HTTP listener", err)
	}
}

// The edge's process runs no gRPC module: its readiness is its own, so one service that is down
// does not take every edge replica out of its load balancer.
func TestAProcessOfSitesAloneIsReadyWhateverTheModulesItCallsSay(t *testing.T) {
	r := &recorder{settings: map[string]string{}}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := errors.New("unreachable")
	h, err := host.Start(context.Background(), []module.Module{site(r, "edge")}, host.Options{
		Log: quiet(), HTTPListener: lis,
		Remote: func(name string, _ bool) (grpc.ClientConnInterface, error) {
			if name == "only" {
				return grpc.ClientConnInterface(nil), nil
			}
			return nil, unreachable
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if code := get(t, "http://"+lis.Addr().String()+ops.ReadyPath); code != http.StatusOK {
		t.Errorf("%s = %d, want 200", ops.ReadyPath, code)
	}
}

func TestWaitEndsWithTheContext(t *testing.T) {
	h, err := host.Start(context.Background(), nil, host.Options{Log: quiet(), OpsAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatalf("Wait = %v after the context ended, want nil", err)
	}
}

// TestAnAddressInUseIsRefusedNamingTheModuleAndTheVariableToChange protects the one line an
// operator gets when a port is taken: who could not listen, where, and which variable moves it
// (the all-in-one's per-module variable, a production main's own, the ops endpoints').
func TestAnAddressInUseIsRefusedNamingTheModuleAndTheVariableToChange(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	addr := taken.Addr().String()
	r := &recorder{settings: map[string]string{}}
	settings := map[string]config.Values{"identity": settingsOf(t, "")}
	cases := []struct {
		name string
		opts host.Options
		mod  module.Module
		want string
	}{
		{"the all-in-one's module variable", host.Options{GRPCAddrs: map[string]string{"identity": addr}},
			probe(r, "identity"), "identity: listen on " + addr + ": address already in use (set BERTH_IDENTITY_GRPC_ADDR)"},
		{"a production main's variable", host.Options{GRPCAddrs: map[string]string{"identity": addr}, GRPCAddrVars: map[string]string{"identity": "BERTH_GRPC_ADDR"}},
			probe(r, "identity"), "identity: listen on " + addr + ": address already in use (set BERTH_GRPC_ADDR)"},
		{"the ops endpoints", host.Options{GRPCAddrs: map[string]string{"identity": "127.0.0.1:0"}, OpsAddr: addr},
			probe(r, "identity"), "ops: listen on " + addr + ": address already in use (set BERTH_OPS_ADDR)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Log, c.opts.Settings = quiet(), settings
			h, err := host.Start(context.Background(), []module.Module{c.mod}, c.opts)
			if err == nil {
				h.Close()
				t.Fatal("started on an address in use")
			}
			if err.Error() != c.want {
				t.Fatalf("Start = %q, want %q", err, c.want)
			}
		})
	}
}

func TestListenNamesTheOwnerAndTheVariableOfAnAddressInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	_, err = host.Listen("edge", taken.Addr().String(), "BERTH_HTTP_ADDR")
	if want := "edge: listen on " + taken.Addr().String() + ": address already in use (set BERTH_HTTP_ADDR)"; err == nil || err.Error() != want {
		t.Fatalf("Listen = %v, want %q", err, want)
	}
}
