package procs

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestParseProcStatAddsUserAndSystemTime(t *testing.T) {
	// A real line's shape; the command name holds a space and a parenthesis, which must not shift
	// the fields. utime = 250 ticks, stime = 75 ticks: 3.25 s at 100 ticks a second.
	line := "4242 (berth (x) y) S 1 4242 4242 0 -1 4194560 12345 0 0 0 250 75 0 0 20 0 12 0 98765 1234567 890 18446744073709551615\n"
	got, err := parseProcStat([]byte(line))
	if err != nil || got != 3250*time.Millisecond {
		t.Fatalf("parseProcStat = %v, %v; want 3.25s", got, err)
	}
	for _, bad := range []string{"", "4242 berth S 1", "4242 (berth) S 1 2 3", "4242 (berth) S 1 4242 4242 0 -1 4194560 12345 0 0 0 x 75 0"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("parseProcStat(%q) accepted it", bad)
		}
	}
}

func TestPeakRSSResetsToTheResidentSetAndReadsInBytes(t *testing.T) {
	pid := os.Getpid()
	rss, err := Status(pid, "VmRSS:")
	if err != nil || rss < 1<<20 {
		t.Fatalf("Status(VmRSS) = %d, %v; want a test binary's resident set in bytes", rss, err)
	}
	if err := ResetPeakRSS(pid); err != nil {
		t.Skipf("this kernel cannot reset the peak: %v", err)
	}
	ballast := make([]byte, 64<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1 // touch every page so it is resident
	}
	peak, err := Status(pid, "VmHWM:")
	if err != nil || peak < rss+32<<20 {
		t.Fatalf("VmHWM after 64 MiB touched = %d, resident set before %d (%v)", peak, rss, err)
	}
	runtime.KeepAlive(ballast)
	if _, err := Status(pid, "NoSuchField:"); err == nil {
		t.Fatal("Status found a field /proc does not have")
	}
}
