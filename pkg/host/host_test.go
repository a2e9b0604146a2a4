package host_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
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

func TestTheOpsEndpointsServeOnTheirListenerOrInsideTheHTTPHandler(t *testing.T) {
	r := &recorder{settings: map[string]string{}}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(context.Background(), []module.Module{probe(r, "only")}, host.Options{
		Log: quiet(), Settings: map[string]config.Values{"only": settingsOf(t, "")}, HTTPListener: lis,
		HTTP: func(_ context.Context, dial host.Dialer, mountOps func(*http.ServeMux)) (http.Handler, error) {
			if _, err := dial("only", false); err != nil {
				return nil, err
			}
			if _, err := dial("missing", false); err == nil {
				return nil, errors.New("a module neither here nor Remote was dialled")
			}
			mux := http.NewServeMux()
			mountOps(mux)
			mux.HandleFunc("/hello", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
			return mux, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + lis.Addr().String()
	if code := get(t, base+"/hello"); code != http.StatusTeapot {
		t.Errorf("the HTTP handler answered %d", code)
	}
	if code := get(t, base+ops.HealthPath); code != http.StatusOK {
		t.Errorf("%s on the HTTP handler = %d", ops.HealthPath, code)
	}
	h.Close()
	if _, err := http.Get(base + "/hello"); err == nil {
		t.Error("the HTTP server still answers after Close")
	}
}

func TestReadinessIsTheModulesUnlessTheProcessSaysOtherwise(t *testing.T) {
	r := &recorder{settings: map[string]string{}}
	notReady := errors.New("backends down")
	opsLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := opsLis.Addr().String()
	_ = opsLis.Close()
	h, err := host.Start(context.Background(), []module.Module{probe(r, "only")}, host.Options{
		Log: quiet(), Settings: map[string]config.Values{"only": settingsOf(t, "")}, OpsAddr: addr,
		Ready: func(context.Context) error { return notReady },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if code := get(t, "http://"+addr+ops.ReadyPath); code != http.StatusServiceUnavailable {
		t.Errorf("%s = %d with a failing Ready, want 503", ops.ReadyPath, code)
	}
	if err := h.Ready(context.Background()); err != nil {
		t.Errorf("the modules' own readiness: %v", err)
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
