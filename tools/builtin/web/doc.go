// Package web provides the built-in web tools: web_fetch, which reads a web
// page as Markdown or text, and web_search, which queries a search service
// (SearXNG or the Brave Search API).
//
// # The private-network guard
//
// web_fetch takes its URL from the model, so by default it reaches only
// public internet addresses. It refuses loopback, private (RFC 1918 and
// fc00::/7), link-local (169.254.0.0/16, where cloud metadata services live,
// and fe80::/10), multicast, unspecified, carrier-grade NAT (100.64.0.0/10),
// documentation, benchmarking and reserved ranges, and the same addresses
// carried in IPv6 (IPv4-mapped, NAT64, 6to4). The check runs in the dialer,
// for the address actually being connected to after name resolution, so a
// host name that resolves to an internal address (including by DNS
// rebinding) is refused; it runs again for every redirect. Hosts written as
// unusual numeric spellings of an IP address (2130706433, 0x7f000001,
// 0177.0.0.1, 127.1) are refused before any connection, with a message
// asking for the dotted-decimal form. FetchConfig.AllowPrivateNetwork lifts
// the address check for intranet use, except for the cloud metadata
// services (169.254.169.254, fd00:ec2::254, 169.254.170.2, 169.254.170.23,
// fd00:ec2::23, Alibaba's 100.100.100.200 and Azure's wireserver
// 168.63.129.16, which is public unicast space), refused whatever the
// configuration, since they hand out the machine's credentials.
//
// web_search's backend URL is chosen by the operator, not the model, and is
// not subject to the guard.
package web
