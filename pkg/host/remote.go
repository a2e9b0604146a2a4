package host

import (
	"fmt"
	"slices"
	"sync"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/module"
)

// Remotes reach the modules a process calls but does not run, at their address settings
// (BERTH_<NAME>_ADDR): one lazy connection per module and credential, made on first use and kept
// for the process's life, so a connection does not wait for its service and the process can start
// before the services it calls. Its Dial is a host's Remote.
type Remotes struct {
	settings     config.Values
	tls          *grpcx.TLS
	serviceToken string
	caller       string   // the process, for the error naming a module it may not call
	known        []string // the modules it may call: their address settings are declared

	mu    sync.Mutex // a host's readiness probes may dial while its HTTP handler is built
	conns map[string]*grpc.ClientConn
}

// NewRemotes returns the connections caller makes to the modules named in known, whose address
// settings settings holds.
func NewRemotes(caller string, known []string, settings config.Values, serviceToken string, tls *grpcx.TLS) *Remotes {
	return &Remotes{settings: settings, tls: tls, serviceToken: serviceToken, caller: caller, known: known, conns: map[string]*grpc.ClientConn{}}
}

// Dial returns the connection to module name, carrying the service token when service is true.
func (r *Remotes) Dial(name string, service bool) (grpc.ClientConnInterface, error) {
	if !slices.Contains(r.known, name) {
		return nil, fmt.Errorf("%s calls the %s service, which it does not declare it calls", r.caller, name)
	}
	key, token := name, ""
	if service {
		key, token = name+"/service", r.serviceToken
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if conn, ok := r.conns[key]; ok {
		return conn, nil
	}
	env := module.AddrVar(name)
	target := r.settings.String(env)
	conn, err := grpcx.Dial(target, token, r.tls)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", env, target, err)
	}
	r.conns[key] = conn
	return conn, nil
}

// Close ends every connection.
func (r *Remotes) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, conn := range r.conns {
		_ = conn.Close()
	}
}
