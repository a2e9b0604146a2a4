package procs

import (
	"bytes"
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

// RepoRoot is the directory of the Go workspace (go.work), where the packages are built from.
func RepoRoot() (string, error) {
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

// Build compiles pkg (relative to root) into dir and returns the binary's path.
func Build(root, dir, pkg string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// FreeAddrs returns n distinct free loopback addresses. All listeners are held until every port is
// chosen, so no two are the same; a port could still be taken between here and the server's
// listen, which then fails its start-up loudly.
func FreeAddrs(n int) ([]string, error) {
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

// Process is a server the benchmark started, with its output going to a log file.
type Process struct {
	Name   string
	cmd    *exec.Cmd
	log    string
	exited chan error
}

// Start runs bin with args and env (the caller's own BERTH_* variables are not inherited, so a developer's
// shell cannot change what is measured or tested) and its output in dir/<name>.log, appended to
// when a process of that name ran before (a restart keeps both lives in one log).
func Start(name, bin, dir string, env map[string]string, args ...string) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // the child writes the log through its own copy of the file
	cmd := exec.Command(bin, args...)
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
	p := &Process{Name: name, cmd: cmd, log: logPath, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	return p, nil
}

// WaitReady polls check every poll until it succeeds, the process exits or timeout passes; poll
// bounds how late a measured ready time can be.
func (p *Process) WaitReady(timeout, poll time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case exitErr := <-p.exited:
			p.exited <- exitErr
			return fmt.Errorf("%s exited during start-up (%v); its log:\n%s", p.Name, exitErr, p.Tail())
		case <-time.After(poll):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s (%v); its log:\n%s", p.Name, timeout, err, p.Tail())
		}
	}
}

// CPU is the process's CPU time so far (user + system), from /proc/<pid>/stat.
func (p *Process) CPU() (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStat(b)
}

// Stop sends SIGINT (the servers shut down gracefully on it) and kills the process after 20 s.
func (p *Process) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-p.exited:
		p.exited <- err
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
	}
}

// Kill ends the process with SIGKILL, as a node failure or the OOM killer would: no shutdown
// runs, open transactions and connections are simply cut. It returns once the process is gone.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	err := <-p.exited
	p.exited <- err
}

// Wait waits up to timeout for a process that is meant to end by itself (a one-off command) and
// returns how it ended; nil is a zero exit status.
func (p *Process) Wait(timeout time.Duration) error {
	select {
	case err := <-p.exited:
		p.exited <- err
		if err != nil {
			return fmt.Errorf("%s: %w; its log:\n%s", p.Name, err, p.Tail())
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("%s still running after %s; its log:\n%s", p.Name, timeout, p.Tail())
	}
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case err := <-p.exited:
		p.exited <- err
		return true
	default:
		return false
	}
}

// Tail is the end of the process's log, for start-up errors.
func (p *Process) Tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// HTTPOK is a readiness check: GET url answers 200.
func HTTPOK(ctx context.Context, url string) func() error {
	return func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			return err
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: HTTP %d", url, res.StatusCode)
		}
		return nil
	}
}

// RSS is the process's resident set now, from /proc/<pid>/status.
func (p *Process) RSS() (int64, error) { return Status(p.Pid(), "VmRSS:") }

// Pid is the process's id, for Status and ResetPeakRSS.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// ResetPeakRSS sets the peak resident set (VmHWM) of process pid back to its resident set now
// (Linux: clear_refs 5), so that a later Status(pid, "VmHWM:") measures only what follows;
// os.Getpid() is the caller's own.
func ResetPeakRSS(pid int) error {
	return os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
}

// Status reads a "<field> <n> kB" line (field with its colon, e.g. "VmRSS:") of
// /proc/<pid>/status, in bytes.
func Status(pid int, field string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("process %d: no %s in its status", pid, field)
}

// clockTicks is the kernel's USER_HZ, the unit of utime and stime in /proc/<pid>/stat. sysconf
// (_SC_CLK_TCK) is 100 on every Linux architecture Go supports, and reading it needs cgo.
const clockTicks = 100

// parseProcStat returns the CPU time (utime + stime) of /proc/<pid>/stat's contents. The command
// name (field 2) is parenthesised and may itself hold spaces and parentheses, so fields are counted
// from the last ')'.
func parseProcStat(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat: no command name")
	}
	// After ") " come field 3 (state), 4, ...; utime and stime are fields 14 and 15.
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat: %d fields after the command name, want at least 13", len(f))
	}
	var ticks uint64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
