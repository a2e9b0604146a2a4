package target

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/module"
)

// Services are the modules whose admin APIs berthctl calls, with the addresses they serve gRPC on
// by default (a test holds them to the all-in-one's modules, which berthctl does not link).
var Services = []module.Module{
	{Name: "identity", DefaultAddr: "127.0.0.1:9101"},
	{Name: "tenant", DefaultAddr: "127.0.0.1:9102"},
	{Name: "analytics", DefaultAddr: "127.0.0.1:9103"},
	{Name: "billing", DefaultAddr: "127.0.0.1:9104"},
	{Name: "webhook", DefaultAddr: "127.0.0.1:9105"},
	{Name: "outbound", DefaultAddr: "127.0.0.1:9106"},
}

const (
	adminTokenVar = "BERTH_ADMIN_TOKEN"
	// APIKeyVar holds an API key of the app for the commands whose routes take an app's key rather
	// than the admin token (the outbound commands: write; audit-log: read): an environment
	// variable, never a flag, which shell history and the process list keep.
	APIKeyVar  = "BERTH_API_KEY"
	demoDirVar = "BERTH_DEMO_DIR"
)

// Settings are berthctl's environment variables.
func Settings() []config.Setting {
	s := []config.Setting{
		{Name: adminTokenVar, Kind: config.Text, Secret: true,
			Doc: "the deployment's admin token, which every call presents; unset: the one in the demo.json of a running all-in-one"},
		{Name: APIKeyVar, Kind: config.Text, Secret: true,
			Doc: "an API key of the app the command names (-app), which the webhook-endpoint commands (a write key) and audit-log (a read key) present instead of the admin token"},
		{Name: demoDirVar, Kind: config.Text,
			Doc: "folder of the demo.json a running all-in-one wrote; unset: " + seed.DefaultDir + "/ in the working directory or its nearest ancestor that has one"},
	}
	for _, m := range Services {
		s = append(s, config.Setting{Name: m.GRPCAddrVar(), Kind: config.Addr, Default: m.DefaultAddr,
			Doc: "the " + m.Name + " service's gRPC address (flag -" + m.Name + " overrides it); unset: the running all-in-one's, else the default"})
	}
	return append(s, grpcx.TLSSettings...)
}

// Target is where berthctl's calls go, and where each part of that was found (for errors).
type Target struct {
	// Addrs and AddrFrom map a service's name to its address and the address's source.
	Addrs, AddrFrom  map[string]string
	Token, TokenFrom string
	// TLS is the deployment's CA (BERTH_GRPC_TLS_*); nil calls in plaintext.
	TLS *grpcx.TLS
}

// ErrNoToken is the refusal when no source names an admin token.
var ErrNoToken = errors.New("no admin token: set " + adminTokenVar + ", or start Berth with make run (berthctl then reads its " +
	seed.DefaultDir + "/" + seed.FileName + ")")

// Resolve parses berthctl's settings from env (once) and picks each value from the first source
// that has it: flags (a service's name to its -<service> flag, "" when not given), env, the demo.json
// found from dir (BERTH_DEMO_DIR, else dir and its ancestors), the defaults.
func Resolve(env config.Env, flags map[string]string, dir string) (Target, error) {
	t := Target{Addrs: map[string]string{}, AddrFrom: map[string]string{}}
	v, err := config.Parse(env, Settings())
	if err != nil {
		return t, err
	}
	demo, demoPath, err := findDemo(v, dir)
	if err != nil {
		return t, err
	}
	for _, m := range Services {
		name, variable := m.Name, m.GRPCAddrVar()
		switch {
		case flags[name] != "":
			t.Addrs[name], t.AddrFrom[name] = flags[name], "flag -"+name
		case v.Given(variable):
			t.Addrs[name], t.AddrFrom[name] = v.String(variable), variable
		case demo.GRPC[name] != "":
			t.Addrs[name], t.AddrFrom[name] = demo.GRPC[name], demoPath
		default:
			t.Addrs[name], t.AddrFrom[name] = v.String(variable), "default"
		}
	}
	switch {
	case v.Given(adminTokenVar):
		t.Token, t.TokenFrom = v.String(adminTokenVar), adminTokenVar
	case demo.AdminToken != "":
		t.Token, t.TokenFrom = demo.AdminToken, demoPath
	default:
		return t, ErrNoToken
	}
	t.TLS, err = grpcx.TLSFromEnv(v.Env())
	return t, err
}

// findDemo reads the demo.json in BERTH_DEMO_DIR, or the nearest one in dir or an ancestor's
// .berth/; none is no error (the zero File), a named folder without one is.
func findDemo(v config.Values, dir string) (seed.File, string, error) {
	if named := v.String(demoDirVar); named != "" {
		path := filepath.Join(named, seed.FileName)
		f, err := seed.ReadFile(path)
		if err != nil {
			return f, path, fmt.Errorf("%s=%q: %w", demoDirVar, named, err)
		}
		return f, path, nil
	}
	for dir != "" {
		path := filepath.Join(dir, seed.DefaultDir, seed.FileName)
		if _, err := os.Stat(path); err == nil {
			f, err := seed.ReadFile(path)
			return f, path, err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return seed.File{}, "", nil
}
