package domain

import "net/netip"

// refused are the ranges a production sender never connects to: loopback, private, carrier-grade
// NAT, link-local (cloud metadata at 169.254.169.254 among them), multicast, unspecified,
// benchmarking, reserved and documentation ranges, and their IPv6 counterparts.
var refused = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
		"224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "64:ff9b::/96", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Refused reports whether a production sender refuses to connect to ip. An IPv4-mapped IPv6 address is judged as the IPv4
// address it maps, so ::ffff:127.0.0.1 is loopback too.
func Refused(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range refused {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
