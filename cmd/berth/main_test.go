package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
	curl, err := exec.LookPath("curl")
	if err != nil {
		stacktest.Unavailable(t, "curl is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "berth")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"BERTH_HTTP_ADDR=127.0.0.1:0", "BERTH_IDENTITY_GRPC_ADDR=127.0.0.1:0",
		"BERTH_TENANT_GRPC_ADDR=127.0.0.1:0", "BERTH_ANALYTICS_GRPC_ADDR=127.0.0.1:0",
		"BERTH_DEMO_DIR="+dir, "BERTH_NATS_URL=", "BERTH_DATABASE_URL=", "BERTH_LOG_LEVEL=error")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	defer func() { _ = cmd.Process.Kill() }() // a no-op once it has exited

	// Read stdout until the banner is complete (its last line is the admin token's export).
	var mu sync.Mutex
	var banner []string
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		done := false
		for sc.Scan() {
			mu.Lock()
			if !done {
				banner = append(banner, sc.Text())
			}
			mu.Unlock()
			if strings.HasPrefix(sc.Text(), "export BERTH_ADMIN_TOKEN=") && !done {
				done = true
				close(ready)
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case <-ready:
	case err := <-exited:
		t.Fatalf("berth exited before it was ready: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("berth did not become ready within 90s")
	}

	var demo map[string]any
	raw, err := os.ReadFile(filepath.Join(dir, "demo.json"))
	if err != nil || json.Unmarshal(raw, &demo) != nil {
		t.Fatalf("demo.json: %v %q", err, raw)
	}
	for _, k := range []string{"baseUrl", "appId", "readKey", "writeKey", "tenantId", "userIds", "promotionCode", "state", "sandbox", "pspx", "pspyApp", "adminToken", "grpc"} {
		if demo[k] == nil || demo[k] == "" {
			t.Fatalf("demo.json lacks %s: %s", k, raw)
		}
	}

	if grpc, _ := demo["grpc"].(map[string]any); len(grpc) != len(allinone.Modules) {
		t.Fatalf("demo.json names %d modules' gRPC addresses, want %d: %s", len(grpc), len(allinone.Modules), raw)
	}

	mu.Lock()
	lines := append([]string(nil), banner...)
	mu.Unlock()
	for _, l := range lines {
		if len(l) > 80 {
			t.Errorf("a banner line is %d columns, want at most 80: %q", len(l), l)
		}
	}
	// The pages at the top open as HTML.
	for _, l := range lines {
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
	exports, commands := shellCommands(lines)
	if len(commands) < 12 || !strings.Contains(exports, "export BERTH_READ_KEY=") {
		t.Fatalf("want the exports, the 10 demo curls, the checkout and the clock's, got %d commands:\n%s", len(commands), strings.Join(lines, "\n"))
	}
	for _, c := range commands {
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

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
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
