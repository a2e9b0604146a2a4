package domain_test

import (
	"net/netip"
	"testing"

	"github.com/berthhq/berth/services/outbound/internal/domain"
)

func TestTheGuardRefusesEveryInternalRange(t *testing.T) {
	tests := []struct {
		addr    string
		refused bool
	}{
		{"0.0.0.0", true},          // unspecified / this network
		{"10.1.2.3", true},         // private
		{"100.64.0.1", true},       // carrier-grade NAT
		{"127.0.0.1", true},        // loopback
		{"127.255.255.254", true},  // loopback, the whole /8
		{"169.254.169.254", true},  // link-local: the cloud metadata service
		{"172.16.0.1", true},       // private
		{"172.31.255.255", true},   // private, the range's end
		{"192.0.0.1", true},        // IETF protocol assignments
		{"192.0.2.1", true},        // documentation
		{"192.168.1.1", true},      // private
		{"198.18.0.1", true},       // benchmarking
		{"198.51.100.7", true},     // documentation
		{"203.0.113.9", true},      // documentation
		{"224.0.0.1", true},        // multicast
		{"239.255.255.250", true},  // multicast (SSDP)
		{"240.0.0.1", true},        // reserved
		{"255.255.255.255", true},  // broadcast
		{"::", true},               // unspecified
		{"::1", true},              // loopback
		{"::ffff:127.0.0.1", true}, // IPv4-mapped loopback
		{"::ffff:169.254.169.254", true},
		{"64:ff9b::a9fe:a9fe", true}, // NAT64 of the metadata address
		{"fc00::1", true},            // unique local
		{"fd12:3456::1", true},       // unique local
		{"fe80::1", true},            // link-local
		{"ff02::1", true},            // multicast
		{"2001:db8::1", true},        // documentation
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"172.32.0.1", false}, // just past 172.16/12
		{"100.128.0.1", false},
		{"2606:4700:4700::1111", false},
	}
	for _, tc := range tests {
		if got := domain.Refused(netip.MustParseAddr(tc.addr)); got != tc.refused {
			t.Errorf("Refused(%s) = %v, want %v", tc.addr, got, tc.refused)
		}
	}
}
