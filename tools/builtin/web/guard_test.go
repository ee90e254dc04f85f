package web

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		addr    string
		blocked bool
	}{
		{name: "public v4", addr: "93.184.216.34", blocked: false},
		{name: "public v4 dns", addr: "8.8.8.8", blocked: false},
		{name: "public v6", addr: "2606:4700:4700::1111", blocked: false},
		{name: "loopback", addr: "127.0.0.1", blocked: true},
		{name: "loopback other", addr: "127.45.6.7", blocked: true},
		{name: "loopback v6", addr: "::1", blocked: true},
		{name: "rfc1918 10", addr: "10.1.2.3", blocked: true},
		{name: "rfc1918 172.16", addr: "172.16.0.1", blocked: true},
		{name: "rfc1918 172.31", addr: "172.31.255.255", blocked: true},
		{name: "just outside 172.16/12", addr: "172.32.0.1", blocked: false},
		{name: "rfc1918 192.168", addr: "192.168.1.1", blocked: true},
		{name: "cloud metadata", addr: "169.254.169.254", blocked: true},
		{name: "link-local v4", addr: "169.254.1.1", blocked: true},
		{name: "link-local v6", addr: "fe80::1", blocked: true},
		{name: "link-local v6 with zone", addr: "fe80::1%eth0", blocked: true},
		{name: "unique local v6", addr: "fd00::1", blocked: true},
		{name: "unique local v6 fc", addr: "fc00::1", blocked: true},
		{name: "multicast v4", addr: "224.0.0.1", blocked: true},
		{name: "multicast v6", addr: "ff02::1", blocked: true},
		{name: "unspecified v4", addr: "0.0.0.0", blocked: true},
		{name: "this network", addr: "0.1.2.3", blocked: true},
		{name: "unspecified v6", addr: "::", blocked: true},
		{name: "cgnat", addr: "100.64.0.1", blocked: true},
		{name: "cgnat top", addr: "100.127.255.254", blocked: true},
		{name: "just outside cgnat", addr: "100.128.0.1", blocked: false},
		{name: "broadcast", addr: "255.255.255.255", blocked: true},
		{name: "mapped loopback", addr: "::ffff:127.0.0.1", blocked: true},
		{name: "mapped metadata", addr: "::ffff:169.254.169.254", blocked: true},
		{name: "mapped private", addr: "::ffff:10.0.0.1", blocked: true},
		{name: "mapped public", addr: "::ffff:8.8.8.8", blocked: false},
		{name: "nat64 loopback", addr: "64:ff9b::7f00:1", blocked: true},
		{name: "nat64 public", addr: "64:ff9b::808:808", blocked: false},
		{name: "6to4 private", addr: "2002:c0a8:101::1", blocked: true},
		{name: "ipv4-compatible", addr: "::127.0.0.1", blocked: true},
		{name: "documentation v6", addr: "2001:db8::1", blocked: true},
		{name: "documentation v6 3fff::/20", addr: "3fff:fff::1", blocked: true},
		{name: "benchmarking v6", addr: "2001:2::1", blocked: true},
		{name: "local-use nat64", addr: "64:ff9b:1::a9fe:a9fe", blocked: true},
		{name: "local-use nat64 private", addr: "64:ff9b:1:a00::1", blocked: true},
		{name: "ipv4-translated (SIIT)", addr: "::ffff:0:7f00:1", blocked: true},
		{name: "srv6 sid", addr: "5f00::1", blocked: true},
		{name: "unallocated v6", addr: "4000::1", blocked: true},
		{name: "dummy prefix v6", addr: "100:0:0:1::1", blocked: true},
		{name: "public v6 google", addr: "2001:4860:4860::8888", blocked: false},
		{name: "public v6 top of 2000::/3", addr: "3ffe::1", blocked: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := netip.MustParseAddr(tt.addr)
			reason := classify(a)
			if got := reason != ""; got != tt.blocked {
				t.Errorf("classify(%s) = %q: blocked %v, want %v", tt.addr, reason, got, tt.blocked)
			}
			if got := publicOnly(a); got == tt.blocked {
				t.Errorf("publicOnly(%s) = %v, want %v", tt.addr, got, !tt.blocked)
			}
			if got, want := privateNetwork(a), metadata(a) == ""; got != want {
				t.Errorf("privateNetwork(%s) = %v, want %v", tt.addr, got, want)
			}
		})
	}
}

// TestMetadataAddresses: every cloud's metadata service is refused, in
// every spelling the guard reads, with or without the private network.
// 168.63.129.16 (Azure's wireserver) is public unicast and once passed.
func TestMetadataAddresses(t *testing.T) {
	tests := []struct {
		addr, want string
	}{
		{"169.254.169.254", "cloud metadata address"},
		{"fd00:ec2::254", "AWS metadata address (IPv6)"},
		{"100.100.100.200", "Alibaba Cloud metadata address"},
		{"168.63.129.16", "Azure wireserver"},
		{"169.254.170.2", "ECS task metadata"},
		{"169.254.170.23", "EKS Pod Identity"},
		{"fd00:ec2::23", "EKS Pod Identity"},
		{"::ffff:168.63.129.16", "Azure wireserver metadata address (written as IPv4-mapped IPv6)"},
		{"64:ff9b::a83f:8110", "Azure wireserver metadata address (embedded in a NAT64 address)"},
		{"2002:a83f:8110::1", "Azure wireserver metadata address (embedded in a 6to4 address)"},
		{"64:ff9b::a9fe:a9fe", "cloud metadata address of AWS, Google Cloud, Azure and Oracle (embedded in a NAT64 address)"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tt.addr)
			if got := classify(a); !strings.Contains(got, tt.want) {
				t.Errorf("classify(%s) = %q, want it to contain %q", tt.addr, got, tt.want)
			}
			for _, policy := range []struct {
				name  string
				allow func(netip.Addr) bool
			}{{"public only", publicOnly}, {"private network", privateNetwork}} {
				if policy.allow(a) {
					t.Errorf("%s policy allows %s", policy.name, tt.addr)
				}
				g := &guard{allowIP: policy.allow}
				err := g.control("tcp", netip.AddrPortFrom(a, 80).String(), nil)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: control(%s) = %v, want a refusal naming %q", policy.name, tt.addr, err, tt.want)
				}
			}
		})
	}
	// Through the tool, with either policy, before any connection.
	for _, cfg := range []FetchConfig{{}, {AllowPrivateNetwork: true}} {
		_, err := callFetch(t, NewFetch(cfg), "http://168.63.129.16/machine?comp=goalstate", 0)
		wantKind(t, err, tools.KindInvalidArguments, "168.63.129.16 is the Azure wireserver metadata address")
	}
	// Neighbours of the metadata addresses are not metadata.
	for _, s := range []string{"168.63.129.17", "100.100.100.201", "fd00:ec2::255", "8.8.8.8"} {
		if r := metadata(netip.MustParseAddr(s)); r != "" {
			t.Errorf("metadata(%s) = %q, want \"\"", s, r)
		}
	}
	if r := classify(netip.MustParseAddr("168.63.129.17")); r != "" {
		t.Errorf("classify(168.63.129.17) = %q, want public", r)
	}
}

func TestParseHost(t *testing.T) {
	tests := []struct {
		name string
		host string
		kind hostKind
		addr string // for hostCanonical and hostOdd
	}{
		{name: "dns name", host: "example.com", kind: hostName},
		{name: "localhost", host: "localhost", kind: hostName},
		{name: "hex-looking name", host: "0x7f.example", kind: hostName},
		{name: "name ending in letters", host: "127.0.0.1.nip.io", kind: hostName},
		{name: "dotted quad", host: "127.0.0.1", kind: hostCanonical, addr: "127.0.0.1"},
		{name: "ipv6", host: "::1", kind: hostCanonical, addr: "::1"},
		{name: "mapped ipv6", host: "::ffff:127.0.0.1", kind: hostCanonical, addr: "::ffff:127.0.0.1"},
		{name: "decimal", host: "2130706433", kind: hostOdd, addr: "127.0.0.1"},
		{name: "decimal metadata", host: "2852039166", kind: hostOdd, addr: "169.254.169.254"},
		{name: "hex", host: "0x7f000001", kind: hostOdd, addr: "127.0.0.1"},
		{name: "hex upper", host: "0X7F000001", kind: hostOdd, addr: "127.0.0.1"},
		{name: "dotted hex", host: "0x7f.0x0.0x0.0x1", kind: hostOdd, addr: "127.0.0.1"},
		{name: "octal", host: "0177.0.0.1", kind: hostOdd, addr: "127.0.0.1"},
		{name: "octal whole", host: "017700000001", kind: hostOdd, addr: "127.0.0.1"},
		{name: "leading zero octets", host: "010.000.000.001", kind: hostOdd, addr: "8.0.0.1"},
		{name: "short form", host: "127.1", kind: hostOdd, addr: "127.0.0.1"},
		{name: "three parts", host: "10.1.258", kind: hostOdd, addr: "10.1.1.2"},
		{name: "trailing dot", host: "127.0.0.1.", kind: hostOdd, addr: "127.0.0.1"},
		{name: "zero", host: "0", kind: hostOdd, addr: "0.0.0.0"},
		{name: "bare 0x", host: "0x", kind: hostOdd, addr: "0.0.0.0"},
		{name: "too big", host: "4294967296", kind: hostBadNumber},
		{name: "octet too big", host: "256.0.0.1", kind: hostBadNumber},
		{name: "bad octal", host: "08.0.0.1", kind: hostBadNumber},
		{name: "five parts", host: "1.2.3.4.5", kind: hostBadNumber},
		{name: "empty label", host: "1..2", kind: hostBadNumber},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, kind := parseHost(tt.host)
			if kind != tt.kind {
				t.Fatalf("parseHost(%q) kind = %d, want %d", tt.host, kind, tt.kind)
			}
			if tt.addr != "" && a != netip.MustParseAddr(tt.addr) {
				t.Errorf("parseHost(%q) = %s, want %s", tt.host, a, tt.addr)
			}
		})
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		name    string
		url     string
		private bool   // AllowPrivateNetwork
		want    string // substring of the refusal, or "" for allowed
	}{
		{name: "public name", url: "https://example.com/x", want: ""},
		{name: "public ip", url: "http://8.8.8.8/", want: ""},
		{name: "loopback", url: "http://127.0.0.1:8080/", want: "loopback"},
		{name: "loopback v6", url: "http://[::1]/", want: "loopback"},
		{name: "mapped loopback v6", url: "http://[::ffff:127.0.0.1]/", want: "loopback"},
		{name: "metadata", url: "http://169.254.169.254/latest/meta-data/", want: "metadata"},
		{name: "private", url: "http://192.168.0.1/", want: "private"},
		{name: "cgnat", url: "http://100.100.100.100/", want: "carrier-grade NAT"},
		{name: "decimal", url: "http://2130706433/", want: "dotted-decimal"},
		{name: "octal", url: "http://0177.0.0.1/", want: "dotted-decimal"},
		{name: "hex", url: "http://0x7f000001/", want: "dotted-decimal"},
		{name: "decimal public is still refused", url: "http://134744072/", want: "dotted-decimal"},
		{name: "bad number", url: "http://999.1.1.1/", want: "not a valid one"},
		{name: "ftp scheme", url: "ftp://example.com/", want: "only http and https"},
		{name: "file scheme", url: "file:///etc/passwd", want: "only http and https"},
		{name: "no host", url: "http:///path", want: "no host"},
		{name: "allowed private loopback", url: "http://127.0.0.1/", private: true, want: ""},
		{name: "allowed private still refuses odd spelling", url: "http://2130706433/", private: true, want: "dotted-decimal"},
		{name: "azure wireserver", url: "http://168.63.129.16/machine?comp=goalstate", want: "Azure wireserver"},
		{name: "allowed private still refuses metadata", url: "http://169.254.169.254/latest/meta-data/", private: true, want: "never fetched"},
		{name: "allowed private still refuses wireserver", url: "http://168.63.129.16/", private: true, want: "never fetched"},
		{name: "allowed private still refuses mapped metadata", url: "http://[::ffff:100.100.100.200]/", private: true, want: "Alibaba Cloud metadata address (written as IPv4-mapped IPv6)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &guard{allowIP: publicOnly}
			if tt.private {
				g.allowIP = privateNetwork
			}
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			err = g.checkURL(u)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("checkURL(%s) = %v, want nil", tt.url, err)
				}
				return
			}
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("checkURL(%s) = %v, want a *RefusedError", tt.url, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("checkURL(%s) = %q, want it to contain %q", tt.url, err, tt.want)
			}
		})
	}
}

func TestControl(t *testing.T) {
	g := &guard{allowIP: publicOnly}
	tests := []struct {
		name    string
		address string
		ok      bool
	}{
		{name: "public", address: "93.184.216.34:443", ok: true},
		{name: "loopback", address: "127.0.0.1:80"},
		{name: "mapped loopback", address: "[::ffff:127.0.0.1]:80"},
		{name: "metadata", address: "169.254.169.254:80"},
		{name: "v6 link-local with zone", address: "[fe80::1%eth0]:80"},
		{name: "not an address", address: "example.com:80"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := g.control("tcp", tt.address, nil)
			if got := err == nil; got != tt.ok {
				t.Errorf("control(%s) = %v, want ok %v", tt.address, err, tt.ok)
			}
		})
	}
}

func FuzzParseHost(f *testing.F) {
	for _, s := range []string{
		"example.com", "127.0.0.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.1",
		"1.2.3.4.5", "0x", "08", "::1", "127.0.0.1.", "0x7f.example", "4294967295", "",
		"0000000000000000000000000000000000000001", "1.0x.00.9",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		a, kind := parseHost(host)
		switch kind {
		case hostName, hostBadNumber:
			if a.IsValid() {
				t.Fatalf("parseHost(%q) = %s with kind %d, want no address", host, a, kind)
			}
		case hostCanonical:
			b, err := netip.ParseAddr(host)
			if err != nil || b != a {
				t.Fatalf("parseHost(%q) = canonical %s, but netip.ParseAddr gives %s, %v", host, a, b, err)
			}
		case hostOdd:
			if !a.Is4() {
				t.Fatalf("parseHost(%q) = odd %s, want an IPv4 address", host, a)
			}
			if _, err := netip.ParseAddr(host); err == nil {
				t.Fatalf("parseHost(%q) called a canonical address odd", host)
			}
			// The canonical spelling of the same address reads back as it.
			if b, k := parseHost(a.String()); k != hostCanonical || b != a {
				t.Fatalf("parseHost(%q) = %s, %d; want %s, canonical", a.String(), b, k, a)
			}
			// And the guard refuses the odd spelling whatever the policy.
			g := &guard{allowIP: privateNetwork}
			if err := g.checkURL(&url.URL{Scheme: "http", Host: host}); err == nil {
				t.Fatalf("checkURL accepted odd host %q (%s)", host, a)
			}
		default:
			t.Fatalf("parseHost(%q) kind = %d, unknown", host, kind)
		}
	})
}
