package allinone

import (
	"context"
	"log/slog"
	"net"
	"testing"
)

// TestAnAddressInUseNamesTheModuleAndItsVariable protects the all-in-one's refusal of a taken port:
// the edge's names BERTH_HTTP_ADDR, a module's its own BERTH_<NAME>_GRPC_ADDR.
func TestAnAddressInUseNamesTheModuleAndItsVariable(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	addr := taken.Addr().String()
	cases := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"edge", func(c *Config) { c.HTTPAddr = addr }, "edge: listen on " + addr + ": address already in use (set BERTH_HTTP_ADDR)"},
		{"identity", func(c *Config) { c.GRPCAddrs["identity"] = addr }, "identity: listen on " + addr + ": address already in use (set BERTH_IDENTITY_GRPC_ADDR)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range []string{"BERTH_DATABASE_URL", "BERTH_NATS_URL"} {
				t.Setenv(v, "")
			}
			t.Setenv("BERTH_HTTP_ADDR", "127.0.0.1:0")
			for _, m := range Modules {
				t.Setenv(m.GRPCAddrVar(), "127.0.0.1:0")
			}
			cfg, err := fromEnv(t)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Log = slog.New(slog.DiscardHandler)
			c.change(&cfg)
			s, err := Start(context.Background(), cfg)
			if err == nil {
				s.Close()
				t.Fatal("started on an address in use")
			}
			if err.Error() != c.want {
				t.Fatalf("Start = %q, want %q", err, c.want)
			}
		})
	}
}
