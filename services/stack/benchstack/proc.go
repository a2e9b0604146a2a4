package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// repoRoot is the directory of the Go workspace (go.work), where the packages are built from.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOWORK").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOWORK: %w", err)
	}
	work := strings.TrimSpace(string(out))
	if work == "" || work == "off" {
		return "", errors.New("run from inside the Berth workspace (go.work)")
	}
	return filepath.Dir(work), nil
}

// build compiles pkg (relative to root) into dir and returns the binary's path.
func build(root, dir, pkg string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// freeAddrs returns n distinct free loopback addresses. All listeners are held until every port is
// chosen, so no two are the same; a port could still be taken between here and the server's
// listen, which then fails its start-up loudly.
func freeAddrs(n int) ([]string, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	addrs := make([]string, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		addrs[i] = l.Addr().String()
	}
	return addrs, nil
}

// process is a server the benchmark started, with its output going to a log file.
type process struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan error
}

// start runs bin with env (the benchmark's own BERTH_* variables are not inherited, so a developer's
// shell cannot change what is measured) and its output in dir/<name>.log.
func start(name, bin, dir string, env map[string]string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BERTH_") && !strings.HasPrefix(kv, "BASELINE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	return p, nil
}

// waitReady polls check until it succeeds, the process exits or timeout passes.
func (p *process) waitReady(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case exitErr := <-p.exited:
			p.exited <- exitErr
			return fmt.Errorf("%s exited during start-up (%v); its log:\n%s", p.name, exitErr, p.tail())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s (%v); its log:\n%s", p.name, timeout, err, p.tail())
		}
	}
}

// cpu is the process's CPU time so far (user + system), from /proc/<pid>/stat.
func (p *process) cpu() (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStat(b)
}

// stop sends SIGINT (the servers shut down gracefully on it) and kills the process after 20 s.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-p.exited:
		p.exited <- err
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
	}
}

// tail is the end of the process's log, for start-up errors.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// httpOK is a readiness check: GET url answers 200.
func httpOK(ctx context.Context, url string) func() error {
	return func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: HTTP %d", url, res.StatusCode)
		}
		return nil
	}
}
