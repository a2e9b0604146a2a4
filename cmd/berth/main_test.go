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
// admin token and every module's gRPC address), the API reference it links opens, and
// every curl command it prints answers with a /v1 success; SIGINT (Ctrl-C) then stops it with exit
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

	// Read stdout until the curl block is complete (the line after it says how to provision more).
	var mu sync.Mutex
	var curls []string
	var reference string // the API reference's URL, from its line near the top
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		done := false
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			mu.Lock()
			if strings.HasPrefix(line, "curl ") && !strings.Contains(line, "<ACCESS_TOKEN>") && !strings.Contains(line, "<CODE>") {
				curls = append(curls, line)
			}
			if rest, ok := strings.CutPrefix(line, "API reference: "); ok {
				reference, _, _ = strings.Cut(rest, " ")
			}
			mu.Unlock()
			if strings.HasPrefix(line, "Provision more with") && !done {
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
	for _, k := range []string{"baseUrl", "appId", "readKey", "writeKey", "tenantId", "userIds", "promotionCode", "sandbox", "pspx", "pspyApp", "adminToken", "grpc"} {
		if demo[k] == nil || demo[k] == "" {
			t.Fatalf("demo.json lacks %s: %s", k, raw)
		}
	}

	if grpc, _ := demo["grpc"].(map[string]any); len(grpc) != len(allinone.Modules) {
		t.Fatalf("demo.json names %d modules' gRPC addresses, want %d: %s", len(grpc), len(allinone.Modules), raw)
	}

	mu.Lock()
	printed := append([]string(nil), curls...)
	referenceURL := reference
	mu.Unlock()
	// The printed API reference opens as a page.
	if res, err := http.Get(referenceURL); err != nil {
		t.Errorf("the printed API reference %q: %v", referenceURL, err)
	} else {
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("the printed API reference %s answers %d %q", referenceURL, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}
	if len(printed) < 8 {
		t.Fatalf("want the 8 demo curls and the analytics one, got %d: %q", len(printed), printed)
	}
	for _, line := range printed {
		out, err := exec.Command("sh", "-c", strings.Replace(line, "curl ", curl+" ", 1)).Output()
		var body map[string]any
		if err != nil || json.Unmarshal(out, &body) != nil {
			t.Fatalf("%s\n=> %v %s", line, err, out)
		}
		// The sandbox clock's control answers its own shape; every route answers the envelope.
		if strings.Contains(line, "/_sandbox/clock/advance") {
			if body["now"] == nil {
				t.Fatalf("%s\n=> %s", line, out)
			}
		} else if body["success"] != true {
			t.Fatalf("%s\n=> %s", line, out)
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
