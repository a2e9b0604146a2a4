package mount

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/berthhq/berth/services/sandbox/clock"
	"github.com/berthhq/berth/services/sandbox/pspx"
	"github.com/berthhq/berth/services/sandbox/pspy"
)

// Paths of the sandboxes under the address they are mounted on.
const (
	PspxPath  = "/_sandbox/pspx"
	PspyPath  = "/_sandbox/pspy"
	ClockPath = "/_sandbox/clock/advance"
)

// Sandboxes are both providers on one clock.
type Sandboxes struct {
	Clock   *clock.Clock
	Pspx    *pspx.Server
	Pspy    *pspy.Server
	PspxURL string // the pspx API base URL, for billing and for people integrating
	PspyURL string
}

// New builds the sandboxes for the public base URL they will be reachable at (their hosted pages
// link to it).
func New(baseURL string, log *slog.Logger) *Sandboxes {
	base := strings.TrimRight(baseURL, "/")
	c := clock.New()
	s := &Sandboxes{Clock: c, PspxURL: base + PspxPath, PspyURL: base + PspyPath}
	s.Pspx = pspx.New(pspx.Config{Clock: c, BaseURL: s.PspxURL, Log: log.With("sandbox", "pspx")})
	s.Pspy = pspy.New(pspy.Config{Clock: c, BaseURL: s.PspyURL, Log: log.With("sandbox", "pspy")})
	return s
}

// Register mounts the sandboxes and the clock control on mux.
func (s *Sandboxes) Register(mux *http.ServeMux) {
	mux.Handle(PspxPath+"/", http.StripPrefix(PspxPath, s.Pspx))
	mux.Handle(PspyPath+"/", http.StripPrefix(PspyPath, s.Pspy))
	mux.Handle(ClockPath, s.Clock.Handler())
}
