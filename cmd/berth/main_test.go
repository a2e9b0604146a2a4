package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// TestMakeRunServesThePrintedCurlsAndStopsOnCtrlC is `make run` as a new user meets it: the real
// binary starts on embedded defaults, writes demo.json (with what berthctl needs to find it: the
// admin token and every module's gRPC address), prints a banner whose every line fits 80
// columns, the pages it links open as HTML, and every curl command it prints, run in a shell after
// its export lines, answers 200 with a /v1 success; SIGINT (Ctrl-C) then stops it with exit
// status 0.
func TestMakeRunServesThePrintedCurlsAndStopsOnCtrlC(t *testing.T) {
	curl := needCurl(t)
	dir := t.TempDir()
	run := start(t, build(t, dir), dir, "BERTH_HTTP_ADDR=127.0.0.1:0", "BERTH_DATABASE_URL=")
	demo := readDemo(t, dir)
	for _, k := range []string{"baseUrl", "appId", "readKey", "writeKey", "tenantId", "userIds", "promotionCode", "state", "sandbox", "pspx", "pspyApp", "idp", "console", "adminToken", "grpc"} {
		if demo[k] == nil || demo[k] == "" {
			t.Fatalf("demo.json lacks %s: %v", k, demo)
		}
	}
	console, _ := demo["console"].(map[string]any)
	if console["url"] != demo["baseUrl"].(string)+"/console" || console["email"] == "" || console["password"] == "" || console["password"] == nil {
		t.Fatalf("demo.json's console member is %v", demo["console"])
	}
	if !slices.ContainsFunc(run.banner, func(l string) bool { return strings.Contains(l, console["password"].(string)) }) {
		t.Errorf("the banner does not print the console member's password:\n%s", strings.Join(run.banner, "\n"))
	}
	if idp, _ := demo["idp"].(map[string]any); idp["idpA"] == nil || idp["idpB"] == nil {
		t.Fatalf("demo.json names the identity providers %v, want idpA and idpB", demo["idp"])
	}
	if grpc, _ := demo["grpc"].(map[string]any); len(grpc) != len(allinone.Modules) {
		t.Fatalf("demo.json names %d modules' gRPC addresses, want %d: %v", len(grpc), len(allinone.Modules), demo)
	}
	for _, l := range run.banner {
		if len(l) > 80 {
			t.Errorf("a banner line is %d columns, want at most 80: %q", len(l), l)
		}
	}
	// The pages at the top open as HTML.
	for _, l := range run.banner {
		for _, label := range []string{"Start here", "Sign up", "Mailbox", "API docs"} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(l), label); ok {
				res, err := http.Get(strings.TrimSpace(rest))
				if err != nil {
					t.Fatalf("%s %q: %v", label, rest, err)
				}
				_ = res.Body.Close()
				if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
					t.Errorf("%s %s answers %d %q", label, rest, res.StatusCode, res.Header.Get("Content-Type"))
				}
			}
		}
	}
	run.checkCurls(t, curl, "")
	run.stop(t)
}

// TestARestartOnPostgresReusesTheDemoAndItsBannerWorks protects `make run` on a database: the
// second start finds the demo the first one seeded (one app, not two), says so, and every curl its
// banner prints answers, the checkouts on this run's fresh provider sandbox included.
func TestARestartOnPostgresReusesTheDemoAndItsBannerWorks(t *testing.T) {
	curl := needCurl(t)
	dir := t.TempDir()
	bin := build(t, dir)
	// One address for both runs: the demo app's redirect URI is the run's own callback page.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	_ = free.Close()
	env := []string{"BERTH_HTTP_ADDR=" + addr, "BERTH_DATABASE_URL=" + stacktest.DatabaseServer(t),
		"BERTH_API_KEY_PEPPER=" + stacktest.RandomHex(16), "BERTH_SECRET_KEY=" + stacktest.RandomHex(32)}
	var apps []any
	for i, want := range []bool{false, true} {
		run := start(t, bin, dir, env...)
		if run.resumed() != want {
			t.Errorf("start %d: banner says reused=%v, want %v", i+1, run.resumed(), want)
		}
		apps = append(apps, readDemo(t, dir)["appId"])
		// A user redeems a promotion code once: the first run's curl spent the demo user's.
		spent := ""
		if want {
			spent = "/promotion-codes/"
		}
		run.checkCurls(t, curl, spent)
		run.stop(t)
	}
	if apps[0] != apps[1] || apps[0] == nil {
		t.Fatalf("the two starts' demo apps are %v: a restart must reuse the first", apps)
	}
}

func needCurl(t *testing.T) string {
	curl, err := exec.LookPath("curl")
	if err != nil {
		stacktest.Unavailable(t, "curl is not installed")
	}
	return curl
}

func build(t *testing.T, dir string) string {
	bin := filepath.Join(dir, "berth")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func readDemo(t *testing.T, dir string) map[string]any {
	var demo map[string]any
	raw, err := os.ReadFile(filepath.Join(dir, "demo.json"))
	if err != nil || json.Unmarshal(raw, &demo) != nil {
		t.Fatalf("demo.json: %v %q", err, raw)
	}
	return demo
}

// running is a started berth binary and the banner it printed.
type running struct {
	cmd    *exec.Cmd
	exited chan error
	banner []string
}

// start runs bin with its demo facts in dir and env on top of free gRPC ports, embedded NATS and
// quiet logs, and returns once the banner is complete (its last line is the admin token's export).
func start(t *testing.T, bin, dir string, env ...string) *running {
	cmd := exec.Command(bin)
	cmd.Env = append(append(os.Environ(),
		"BERTH_IDENTITY_GRPC_ADDR=127.0.0.1:0", "BERTH_TENANT_GRPC_ADDR=127.0.0.1:0", "BERTH_ANALYTICS_GRPC_ADDR=127.0.0.1:0",
		"BERTH_BILLING_GRPC_ADDR=127.0.0.1:0", "BERTH_WEBHOOK_GRPC_ADDR=127.0.0.1:0",
		"BERTH_DEMO_DIR="+dir, "BERTH_NATS_URL=", "BERTH_LOG_LEVEL=error"), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &running{cmd: cmd, exited: make(chan error, 1)}
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // a no-op once it has exited
	var mu sync.Mutex
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		done := false
		for sc.Scan() {
			mu.Lock()
			if !done {
				r.banner = append(r.banner, sc.Text())
			}
			mu.Unlock()
			if strings.HasPrefix(sc.Text(), "export BERTH_ADMIN_TOKEN=") && !done {
				done = true
				close(ready)
			}
		}
		r.exited <- cmd.Wait()
	}()
	select {
	case <-ready:
	case err := <-r.exited:
		t.Fatalf("berth exited before it was ready: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("berth did not become ready within 90s")
	}
	mu.Lock() // the banner is complete: nothing writes it any more
	defer mu.Unlock()
	return r
}

// resumed reports whether the banner says the demo is an earlier run's.
func (r *running) resumed() bool {
	for _, l := range r.banner {
		if strings.Contains(l, "(from an earlier run)") {
			return true
		}
	}
	return false
}

// checkCurls runs every command the banner printed in a shell after its export lines: each
// answers 200 with a /v1 success, except a command containing spent (when not ""), which an
// earlier run already used once for all.
func (r *running) checkCurls(t *testing.T, curl, spent string) {
	exports, commands := shellCommands(r.banner)
	if len(commands) < 12 || !strings.Contains(exports, "export BERTH_READ_KEY=") {
		t.Fatalf("want the exports, the 10 demo curls, the checkout and the clock's, got %d commands:\n%s", len(commands), strings.Join(r.banner, "\n"))
	}
	for _, c := range commands {
		if spent != "" && strings.Contains(c, spent) {
			continue
		}
		// -w appends the status on a line of its own.
		script := exports + "\n" + strings.Replace(c, "curl ", curl+` -w '\n%{http_code}' `, 1)
		out, err := exec.Command("sh", "-c", script).Output()
		i := strings.LastIndex(string(out), "\n")
		body, code := string(out[:max(i, 0)]), string(out[i+1:])
		var answer map[string]any
		if err != nil || code != "200" || json.Unmarshal([]byte(body), &answer) != nil {
			t.Fatalf("%s\n=> %v %s %s", c, err, code, body)
		}
		// The sandbox clock's control answers its own shape; every route answers the envelope.
		if strings.Contains(c, "/_sandbox/clock/advance") {
			if answer["now"] == nil {
				t.Fatalf("%s\n=> %s", c, out)
			}
		} else if answer["success"] != true {
			t.Fatalf("%s\n=> %s", c, out)
		}
	}
}

// stop sends SIGINT (Ctrl-C): berth stops with exit status 0.
func (r *running) stop(t *testing.T) {
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.exited:
		if err != nil {
			t.Fatalf("Ctrl-C: %v, want exit status 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("berth did not stop within 20s of Ctrl-C")
	}
}

// shellCommands finds the banner's export lines (as one script) and its commands that call
// routes (curl), each with the lines it continues onto.
func shellCommands(lines []string) (exports string, commands []string) {
	var exportLines []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "export ") && !strings.HasPrefix(l, "curl ") {
			continue
		}
		whole := l
		for strings.HasSuffix(lines[i], `\`) && i+1 < len(lines) {
			i++
			whole += "\n" + lines[i]
		}
		switch {
		case strings.HasPrefix(l, "export "):
			exportLines = append(exportLines, whole)
		default:
			commands = append(commands, whole)
		}
	}
	return strings.Join(exportLines, "\n"), commands
}
