// Command berthctl is the operators' CLI: it provisions projects, apps, keys, tenants, users and
// billing over the services' admin gRPC APIs with the deployment's admin token. Against a running
// `make run` it needs no flags: it finds the run's .berth/demo.json (see package target for the
// lookup order). Results print as aligned tables on a terminal and as JSON otherwise (-o). An API
// key's secret is printed once, when it is created; Berth keeps only its hash.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/cmd/berthctl/target"
	"github.com/berthhq/berth/pkg/config"
)

func main() {
	err := run(os.Args[1:], os.Stdout)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "berthctl: "+oneLine(err))
	if errors.As(err, new(usageError)) {
		os.Exit(2)
	}
	os.Exit(1)
}

// oneLine is an error's text on one line (a settings refusal names one variable a line).
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// family runs a service's commands: it adds the command's flags to inv.fs, calls inv.parse, then
// calls the admin API over conn.
type family func(ctx context.Context, conn grpc.ClientConnInterface, inv *invocation) (proto.Message, error)

var families = map[string]family{
	"identity": runIdentity, "tenant": runTenant, "billing": runBilling, "webhook": runWebhook, "analytics": runAnalytics,
	"outbound": runOutbound,
}

// run runs the command line args, printing results, usage and help to out; an error it returns is
// a usageError when the command line itself is wrong.
func run(args []string, out io.Writer) error {
	global := flag.NewFlagSet("berthctl", flag.ContinueOnError)
	global.SetOutput(io.Discard) // errors come back as one line; -help prints the usage to out
	addrs := map[string]*string{}
	for _, m := range target.Services {
		addrs[m.Name] = global.String(m.Name, "", m.Name+" gRPC address")
	}
	format := global.String("o", "", "output: table or json")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return writeUsage(out)
		}
		return usageError{err}
	}
	for _, m := range target.Services {
		// An address flag is held to its variable's rule (host:port), under the flag's name.
		flagAddr := config.Setting{Name: "-" + m.Name, Kind: config.Addr}
		if _, err := config.Parse(func(string) string { return *addrs[m.Name] }, []config.Setting{flagAddr}); err != nil {
			return usageError{err}
		}
	}
	if global.NArg() == 0 {
		return writeUsage(out)
	}
	name, rest := global.Arg(0), global.Args()[1:]
	if name == "help" {
		if len(rest) == 0 {
			return writeUsage(out)
		}
		name, rest = rest[0], []string{"-help"}
	}
	cmd, err := lookup(name)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	inv := &invocation{cmd: cmd, fs: fs, args: rest, out: out}
	if cmd.service == "" {
		err = genSecrets(inv)
	} else {
		fs.StringVar(format, "o", *format, "output: table (aligned columns) or json; default: table on a terminal, json otherwise")
		err = call(inv, addrs, format)
	}
	if errors.Is(err, errHelpShown) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", cmd.name, err)
	}
	return nil
}

// call runs a command of a service's admin API and prints its result.
func call(inv *invocation, addrs map[string]*string, format *string) error {
	flags := map[string]string{}
	for name, v := range addrs {
		flags[name] = *v
	}
	conn := &lazyConn{service: inv.cmd.service, apiKey: inv.cmd.apiKey, resolve: func() (target.Target, error) {
		dir, _ := os.Getwd() // without one, only BERTH_DEMO_DIR names a demo.json
		return target.Resolve(config.OS, flags, dir)
	}}
	defer conn.close()
	timeout := inv.cmd.timeout
	if timeout == 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := families[inv.cmd.service](ctx, conn, inv)
	if err != nil {
		return err
	}
	return render(inv.out, res, *format)
}

// writeUsage prints berthctl's usage: every command with its flags, and how berthctl finds Berth.
func writeUsage(out io.Writer) error {
	var b strings.Builder
	b.WriteString(`berthctl provisions Berth over its services' admin gRPC APIs.

usage: berthctl [-o table|json] [-identity|-tenant|-analytics|-billing|-webhook host:port] <command> [flags]
       berthctl help <command>     (or berthctl <command> -help): the command's flags and what it does
`)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	service := "-"
	for _, c := range commands {
		if c.service != service {
			service = c.service
			heading := "\n" + c.service + " commands:"
			if c.service == "" {
				heading = "\nlocal commands:"
			}
			_ = tw.Flush() // each group aligns on its own
			fmt.Fprintln(&b, heading)
		}
		if c.synopsis == "" {
			_, _ = fmt.Fprintf(tw, "  %s\n", c.name) // a tabwriter reports write errors at Flush
			continue
		}
		_, _ = fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.synopsis) // a tabwriter reports write errors at Flush
	}
	_ = tw.Flush()
	b.WriteString(`
Output: an aligned table on a terminal, JSON otherwise; -o json or -o table chooses (before or
after the command). Empty text shows as "-" in tables; JSON always has every field.

Finding Berth: each service's address comes from its flag, else BERTH_<SERVICE>_GRPC_ADDR, else the
.berth/demo.json of a running all-in-one (make run) in BERTH_DEMO_DIR or in the working directory
or its nearest ancestor, else 127.0.0.1:9101..9106. The admin token comes from BERTH_ADMIN_TOKEN,
else that demo.json; the webhook-endpoint commands present the app's write key from BERTH_API_KEY. BERTH_GRPC_TLS_CA (the deployment's CA) calls services that serve TLS.
`)
	_, err := io.WriteString(out, b.String())
	return err
}
