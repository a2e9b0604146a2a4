package grpcx

import (
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc/resolver"
)

// ListScheme names a fixed set of replicas: "list:///10.0.0.1:9101,10.0.0.2:9101". Dial uses it
// for a scheme-less target that lists several host:port pairs, so replicas without a DNS name
// that resolves to all of them (processes on one host, a static deployment) still share the
// calls: round-robin skips a replica while it is unreachable and returns to it when it is back.
const ListScheme = "list"

func init() { resolver.Register(listBuilder{}) }

type listBuilder struct{}

func (listBuilder) Scheme() string { return ListScheme }

// Build reports the addresses once: the set is fixed, and reconnecting to a replica that comes
// back on its address is the subchannel's job, not the resolver's.
func (listBuilder) Build(target resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	addrs, err := parseList(target.Endpoint())
	if err != nil {
		return nil, err
	}
	state := resolver.State{}
	for _, a := range addrs {
		state.Endpoints = append(state.Endpoints, resolver.Endpoint{Addresses: []resolver.Address{{Addr: a}}})
	}
	if err := cc.UpdateState(state); err != nil {
		return nil, fmt.Errorf("grpcx: list %q: %w", target.Endpoint(), err)
	}
	return listResolver{}, nil
}

type listResolver struct{}

func (listResolver) ResolveNow(resolver.ResolveNowOptions) {}
func (listResolver) Close()                                {}

// parseList splits a comma-separated list of host:port pairs; an empty entry or one without a
// port is a configuration mistake worth refusing at start rather than a replica never called.
func parseList(s string) ([]string, error) {
	var addrs []string
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return nil, fmt.Errorf("grpcx: %q in address list %q is not host:port", a, s)
		}
		addrs = append(addrs, a)
	}
	return addrs, nil
}
