// Package egress decides which hosts and addresses outgoing HTTP requests
// may reach, so that a job's URL or an alert webhook cannot be pointed at
// the scheduler's own host, its private network or a cloud metadata
// service (server-side request forgery).
//
// # Rules
//
// A Policy is built from two lists, Config.Allow and Config.Deny. Each
// entry is one of
//
//	10.0.0.0/8, fd00::/8          a network in CIDR notation
//	127.0.0.1, ::1                one address (a /32 or /128 network)
//	metrics.example.com           one host name, compared without case
//	*.internal.example.com        every name under a domain, at any depth,
//	                              but not the domain itself
//
// Host names are written in ASCII (an internationalised name in its
// punycode form). Ports are not part of a rule.
//
// # Decisions
//
// A request's host is checked first, by name, before anything is
// resolved; then each address the name resolves to is checked as it is
// dialled:
//
//  1. A host or address that matches a Deny entry is refused.
//  2. A host or address that matches an Allow entry is allowed. An
//     allowed host name allows every address it resolves to, other than
//     those a Deny network holds: allowing *.corp.example.com lets jobs
//     reach those hosts on the private addresses they have.
//  3. An address in a range refused by default is refused: loopback
//     (127.0.0.0/8, ::1), link-local (169.254.0.0/16, which holds the
//     cloud metadata address 169.254.169.254, and fe80::/10), private
//     (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7), shared
//     carrier-grade NAT space (100.64.0.0/10, where some clouds serve
//     their metadata), unspecified or "this network" (0.0.0.0/8, ::),
//     multicast and broadcast; an IPv4-mapped IPv6 address (::ffff:a.b.c.d)
//     or a NAT64 one (64:ff9b::a.b.c.d) is judged by the IPv4 address it
//     holds. The name "localhost" and names under ".localhost" count as
//     loopback.
//  4. Anything else is allowed.
//
// # Enforcement
//
// The check that matters happens when a connection is made: the
// transports Policy.Transport and Policy.Client build dial through
// Policy.DialContext, which checks the host name of every request,
// redirects included, and then, from a net.Dialer control hook, the very
// address the socket connects to. A name whose DNS answer changes between
// a check and the connection (DNS rebinding) cannot slip through, and nor
// can a redirect to a refused address. Such transports never use a proxy,
// whatever HTTP_PROXY and HTTPS_PROXY say: through a proxy the address
// dialled is the proxy's, and the target would go unchecked.
//
// Policy.CheckHost is the cheap early check of a host alone, for refusing
// a literal refused address when a job is saved; names are not resolved
// then, so it cannot replace the check at connection time.
//
// A refused request fails with a *RefusedError naming the host, the
// address and the rule or default range that refused it.
package egress
