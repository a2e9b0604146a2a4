package host

import (
	"errors"
	"fmt"
	"net"
	"os"
)

// Listen listens on addr for owner (a module's name, "edge", "ops"), whose address comes from the
// variable named. A refusal says who could not listen where, why, and what to change:
// "identity: listen on 127.0.0.1:9101: address already in use (set BERTH_IDENTITY_GRPC_ADDR)".
func Listen(owner, addr, variable string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	// The bare reason ("address already in use"), without Go's "listen tcp ...: bind:" around it.
	var sys *os.SyscallError
	if errors.As(err, &sys) {
		err = sys.Err
	}
	return nil, fmt.Errorf("%s: listen on %s: %w (set %s)", owner, addr, err, variable)
}
