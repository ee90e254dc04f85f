package web

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// blockedPrefixes are ranges that are not reachable public unicast space and
// that netip's predicates do not already cover.
var blockedPrefixes = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `a "this network" address`},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT (shared) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol assignment address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved or broadcast address"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible IPv6 address"},
	{netip.MustParsePrefix("100::/64"), "a discard-only IPv6 address"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo tunnel address"},
	{netip.MustParsePrefix("2001:2::/48"), "a benchmarking address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("3fff::/20"), "a documentation address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local IPv6 address"},
}

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
	// globalUnicast6 holds every IPv6 address the internet registries
	// hand out; the rest of the IPv6 space is reserved, special-purpose
	// or unallocated (IPv4-translated ::ffff:0:0:0/96, SRv6 5f00::/16...).
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
)

// metadataAddrs are the addresses of the clouds' instance metadata and
// credential services. They hand out the machine's credentials to whoever
// asks from inside, so they are refused even when the private network is
// allowed. Some are public unicast (Azure's wireserver) and would pass the
// other checks.
var metadataAddrs = map[netip.Addr]string{
	netip.MustParseAddr("169.254.169.254"): "the cloud metadata address of AWS, Google Cloud, Azure and Oracle",
	netip.MustParseAddr("fd00:ec2::254"):   "the AWS metadata address (IPv6)",
	netip.MustParseAddr("169.254.170.2"):   "the AWS ECS task metadata address",
	netip.MustParseAddr("169.254.170.23"):  "the AWS EKS Pod Identity address",
	netip.MustParseAddr("fd00:ec2::23"):    "the AWS EKS Pod Identity address (IPv6)",
	netip.MustParseAddr("100.100.100.200"): "the Alibaba Cloud metadata address",
	netip.MustParseAddr("168.63.129.16"):   "the Azure wireserver metadata address",
}

// embeddedIPv4 returns the IPv4 address that a carries in IPv6 (mapped
// ::ffff:a.b.c.d, NAT64 64:ff9b::/96 or 6to4 2002::/16) and how, or false.
func embeddedIPv4(a netip.Addr) (netip.Addr, string, bool) {
	if a.Is4In6() {
		return a.Unmap(), "written as IPv4-mapped IPv6", true
	}
	if !a.Is6() {
		return netip.Addr{}, "", false
	}
	b := a.As16()
	switch {
	case nat64Prefix.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "embedded in a NAT64 address", true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), "embedded in a 6to4 address", true
	}
	return netip.Addr{}, "", false
}

// metadata returns why a is a cloud metadata address, or "" when it is not
// one. An IPv4 address carried in IPv6 is judged by that IPv4 address.
func metadata(a netip.Addr) string {
	a = a.WithZone("")
	if r, ok := metadataAddrs[a]; ok {
		return r
	}
	if v4, how, ok := embeddedIPv4(a); ok {
		if r, ok := metadataAddrs[v4]; ok {
			return r + " (" + how + ")"
		}
	}
	return ""
}

// classify returns why a is not a public unicast address (for example
// "a loopback address"), or "" when it is public. IPv4 addresses carried in
// IPv6 (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96 and 6to4 2002::/16) are
// judged by the IPv4 address they carry.
func classify(a netip.Addr) string {
	if !a.IsValid() {
		return "not a valid IP address"
	}
	a = a.WithZone("")
	if v4, how, ok := embeddedIPv4(a); ok {
		if r := classify(v4); r != "" {
			return r + " (" + how + ")"
		}
		if a.Is4In6() {
			return ""
		}
	}
	if r, ok := metadataAddrs[a]; ok {
		return r
	}
	switch {
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "a multicast address"
	case a.IsPrivate():
		return "a private-network address"
	}
	for _, p := range blockedPrefixes {
		if p.prefix.Contains(a) {
			return p.reason
		}
	}
	if a.Is6() && !a.Is4In6() && !nat64Prefix.Contains(a) && !globalUnicast6.Contains(a) {
		return "a reserved IPv6 address outside the global unicast range 2000::/3"
	}
	return ""
}

// publicOnly is the default IP policy: only public unicast addresses.
func publicOnly(a netip.Addr) bool { return classify(a) == "" }

// privateNetwork is the IP policy of FetchConfig.AllowPrivateNetwork: any
// address but the cloud metadata services'.
func privateNetwork(a netip.Addr) bool { return metadata(a) == "" }

// hostKind says how a host name is spelled.
type hostKind int

const (
	hostName      hostKind = iota // a DNS name, not a number
	hostCanonical                 // an IP address in its usual form
	hostOdd                       // a number-like IPv4 spelling: decimal, octal, hex, short form
	hostBadNumber                 // looks numeric but is not a valid address
)

// parseHost reads host (as url.URL.Hostname returns it) the tolerant way
// that inet_aton and browsers do, so that spellings such as 2130706433,
// 0x7f000001, 0177.0.0.1 or 127.1 are recognised as the address they mean.
// It returns the address and how the host was spelled; addr is valid for
// hostCanonical and hostOdd only.
func parseHost(host string) (netip.Addr, hostKind) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, hostCanonical
	}
	if host == "" || strings.ContainsAny(host, ":%[]") {
		return netip.Addr{}, hostName
	}
	s := strings.TrimSuffix(host, ".")
	parts := strings.Split(s, ".")
	// As in the WHATWG URL standard: a host is an IPv4 number only if its
	// last label is numeric; "0x7f.example" is a name.
	if !looksNumeric(parts[len(parts)-1]) {
		return netip.Addr{}, hostName
	}
	if len(parts) > 4 {
		return netip.Addr{}, hostBadNumber
	}
	var nums []uint64
	for _, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, hostBadNumber
		}
		nums = append(nums, n)
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, hostBadNumber
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, hostBadNumber
	}
	v |= last
	// Whatever the spelling, it is not the canonical one (netip.ParseAddr
	// accepted that above), trailing dot included.
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), hostOdd
}

// looksNumeric reports whether s is a label that the URL standard would
// read as a number: digits, or 0x followed by hex digits.
func looksNumeric(s string) bool {
	if s == "" {
		return false
	}
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		for _, c := range h {
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseIPv4Part parses one label of an IPv4 spelling: 0x hex, leading-zero
// octal, or decimal.
func parseIPv4Part(s string) (uint64, bool) {
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" || len(s) > 32 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil || n > 0xffffffff {
		return 0, false
	}
	return n, true
}

// RefusedError reports a URL that web_fetch will not fetch, or an address it
// will not connect to: a private, loopback or otherwise internal address, an
// unusual spelling of an IP address, or a scheme other than http and https.
type RefusedError struct {
	// URL is the URL that was refused (the redirect target for a refused
	// redirect); it may be empty when the refusal came at connect time.
	URL string
	// Addr is the address refused at connect time or spelled in the URL,
	// when there is one.
	Addr netip.Addr
	// Reason says why, in words meant for the model.
	Reason string
}

// Error returns "refused URL: reason", with the URL cut to about 100
// bytes (the URL field keeps it whole).
func (e *RefusedError) Error() string {
	if e.URL == "" {
		return "refused: " + e.Reason
	}
	return fmt.Sprintf("refused %s: %s", shortURL(e.URL), e.Reason)
}

// guard decides which URLs and addresses a fetcher may reach.
type guard struct {
	// allowIP reports whether an address may be connected to. Tests swap
	// it to treat some loopback addresses as public.
	allowIP func(netip.Addr) bool
}

func (g *guard) refuseAddr(a netip.Addr) string {
	if r := metadata(a); r != "" {
		return fmt.Sprintf("%s is %s; cloud metadata services are never fetched", a.WithZone(""), r)
	}
	r := classify(a)
	if r == "" {
		r = "not an allowed address"
	}
	return fmt.Sprintf("%s is %s; only public internet addresses may be fetched", a.WithZone(""), r)
}

// checkURL refuses u before any connection is made: wrong scheme, missing
// host, numeric hosts in odd spellings, and literal IP addresses the policy
// rejects. Names are checked again, for every address they resolve to, when
// the connection is made (see control).
func (g *guard) checkURL(u *url.URL) error {
	switch u.Scheme {
	case "http", "https":
	default:
		return &RefusedError{URL: u.Redacted(), Reason: fmt.Sprintf("scheme %s is not supported; only http and https URLs can be fetched", schema.Quote(u.Scheme))}
	}
	host := u.Hostname()
	if host == "" {
		return &RefusedError{URL: u.Redacted(), Reason: "the URL has no host; give an absolute URL such as https://example.com/page"}
	}
	a, kind := parseHost(host)
	switch kind {
	case hostOdd:
		return &RefusedError{URL: u.Redacted(), Addr: a, Reason: fmt.Sprintf("host %s is an unusual numeric spelling of the IP address %s; write IP addresses in dotted-decimal form (or use the host name)", schema.Quote(host), a)}
	case hostBadNumber:
		return &RefusedError{URL: u.Redacted(), Reason: fmt.Sprintf("host %s looks like an IP address but is not a valid one", schema.Quote(host))}
	case hostCanonical:
		if !g.allowIP(a) {
			return &RefusedError{URL: u.Redacted(), Addr: a, Reason: g.refuseAddr(a)}
		}
	}
	return nil
}

// control is a net.Dialer.Control function: it runs for every connection
// attempt, with the IP address actually being dialled, after name
// resolution. Checking here rather than before resolution means a name that
// resolves to a public address once and to a private one later (DNS
// rebinding) is still refused.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &RefusedError{Reason: fmt.Sprintf("cannot check address %s (%s) before connecting", schema.Quote(address), network)}
	}
	if !g.allowIP(ap.Addr()) {
		return &RefusedError{Addr: ap.Addr(), Reason: g.refuseAddr(ap.Addr())}
	}
	return nil
}
