package logx

import (
	"io"
	"sync"
	"time"
)

// Output is a process's log destination that writes lines in batches. Under load the access log
// alone is a line per request, and a write system call per line cost the edge about as much as
// rendering the line; batched, a busy process makes one write per batch.
//
// A line waits at most FlushDelay, or until MaxPending bytes are waiting. Records at warn or
// above are written at once, with every line before them (New arranges it), so the lines that
// explain a failure are out before the process can die of it; a process killed outright loses at
// most FlushDelay of lower lines. Mains call Flush before they exit.
type Output struct {
	mu      sync.Mutex
	w       io.Writer
	buf     []byte
	timer   *time.Timer
	pending bool // a flush is scheduled
}

// Batching bounds.
const (
	FlushDelay = 50 * time.Millisecond
	MaxPending = 64 << 10
)

// NewOutput batches the lines written to w.
func NewOutput(w io.Writer) *Output { return &Output{w: w} }

// Write queues p, which the handler hands over as whole lines.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, p...)
	if len(o.buf) >= MaxPending {
		return len(p), o.flushLocked()
	}
	if !o.pending {
		o.pending = true
		if o.timer == nil {
			o.timer = time.AfterFunc(FlushDelay, func() { _ = o.Flush() })
		} else {
			o.timer.Reset(FlushDelay)
		}
	}
	return len(p), nil
}

// Flush writes every queued line now.
func (o *Output) Flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.flushLocked()
}

func (o *Output) flushLocked() error {
	if o.pending {
		o.timer.Stop()
		o.pending = false
	}
	if len(o.buf) == 0 {
		return nil
	}
	_, err := o.w.Write(o.buf)
	// A burst may have grown the buffer far beyond a usual batch; do not keep that much.
	if cap(o.buf) > 4*MaxPending {
		o.buf = nil
	} else {
		o.buf = o.buf[:0]
	}
	return err
}
