package egress

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Config lists a Policy's rules. The zero value refuses the default
// ranges (see the package documentation) and allows the rest.
type Config struct {
	// Allow lists hosts and networks that may be reached even though a
	// default range refuses them. Defaults to none.
	Allow []string
	// Deny lists hosts and networks that are never reached, whatever
	// Allow says. Defaults to none.
	Deny []string
	// AllowSetting names, in the message of a RefusedError, what an
	// operator changes to allow a refused address, such as the setting
	// "egress_allow". Defaults to "an allow rule".
	AllowSetting string
}

// Policy decides which hosts and addresses outgoing connections may
// reach. Create it with New; it is immutable and safe for concurrent use.
type Policy struct {
	allowNets, denyNets   []netRule
	allowNames, denyNames []nameRule
	allowSetting          string
	dialer                *net.Dialer
}

// netRule is an IP network of Allow or Deny.
type netRule struct {
	prefix netip.Prefix
	text   string // as written, for messages
}

// nameRule is a host name, or with wildcard a domain's subdomains, of
// Allow or Deny.
type nameRule struct {
	name     string // lower case, no final dot; for a wildcard, ".domain"
	wildcard bool
	text     string
}

// matches reports whether host, in lower case without a final dot, is
// r's name or, for a wildcard, a name under its domain.
func (r nameRule) matches(host string) bool {
	if r.wildcard {
		return len(host) > len(r.name) && strings.HasSuffix(host, r.name)
	}
	return host == r.name
}

// RuleError is the error New returns for an entry of Allow or Deny that
// is not a rule.
type RuleError struct {
	// List is "Allow" or "Deny".
	List string
	// Index is the entry's position in its list.
	Index int
	// Entry is the entry as written.
	Entry string
	// Reason says what is wrong with it.
	Reason string
}

// Error names the entry and the problem.
func (e *RuleError) Error() string {
	return fmt.Sprintf("egress: %s[%d] %q: %s", e.List, e.Index, e.Entry, e.Reason)
}

// New checks cfg's rules and returns their Policy, or a *RuleError naming
// the first entry it cannot parse.
func New(cfg Config) (*Policy, error) {
	p := &Policy{allowSetting: cfg.AllowSetting}
	if p.allowSetting == "" {
		p.allowSetting = "an allow rule"
	}
	for _, l := range []struct {
		name    string
		entries []string
		nets    *[]netRule
		names   *[]nameRule
	}{
		{"Allow", cfg.Allow, &p.allowNets, &p.allowNames},
		{"Deny", cfg.Deny, &p.denyNets, &p.denyNames},
	} {
		for i, entry := range l.entries {
			n, name, reason := parseRule(entry)
			switch {
			case reason != "":
				return nil, &RuleError{List: l.name, Index: i, Entry: entry, Reason: reason}
			case name != nil:
				*l.names = append(*l.names, *name)
			default:
				*l.nets = append(*l.nets, *n)
			}
		}
	}
	// As http.DefaultTransport dials, with the check of every address
	// the socket connects to.
	p.dialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: p.control}
	return p, nil
}

// parseRule parses one entry of Allow or Deny into a network or a name
// rule, or says why it is neither.
func parseRule(entry string) (*netRule, *nameRule, string) {
	s := strings.TrimSpace(entry)
	switch {
	case s == "":
		return nil, nil, "empty"
	case strings.Contains(s, "://"):
		return nil, nil, "a URL; write only its host, such as example.com"
	case s == "*":
		return nil, nil, "a lone * is not a rule; every address is 0.0.0.0/0 and ::/0"
	case strings.Contains(s, "/"):
		prefix, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, nil, "not a CIDR network such as 10.0.0.0/8 or fd00::/8"
		}
		if prefix.Addr().Is4In6() {
			if prefix.Bits() < 96 {
				return nil, nil, "an IPv4-mapped network shorter than /96; write the IPv4 network"
			}
			prefix = netip.PrefixFrom(prefix.Addr().Unmap(), prefix.Bits()-96)
		}
		return &netRule{prefix: prefix.Masked(), text: s}, nil, ""
	}
	if ip, err := netip.ParseAddr(s); err == nil {
		if ip.Zone() != "" {
			return nil, nil, "an address with a zone; write it without %zone"
		}
		ip = ip.Unmap()
		return &netRule{prefix: netip.PrefixFrom(ip, ip.BitLen()), text: s}, nil, ""
	}
	if strings.Contains(s, ":") {
		return nil, nil, "not an IP address, and a host name has no colon (ports are not part of a rule)"
	}
	name := strings.TrimSuffix(strings.ToLower(s), ".")
	wildcard := strings.HasPrefix(name, "*.")
	if wildcard {
		name = name[1:] // ".domain"
	}
	if reason := checkHostName(strings.TrimPrefix(name, ".")); reason != "" {
		return nil, nil, reason
	}
	return nil, &nameRule{name: name, wildcard: wildcard, text: s}, ""
}

// checkHostName says what is wrong with name as a host name, or returns
// "".
func checkHostName(name string) string {
	const want = "; want a host name, *.domain, an IP address or a CIDR network"
	if len(name) > 253 {
		return "longer than 253 characters" + want
	}
	labels := strings.Split(name, ".")
	for _, label := range labels {
		if label == "" || len(label) > 63 {
			return "has an empty label or one longer than 63 characters" + want
		}
		for _, c := range []byte(label) {
			ok := 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
			if !ok {
				if c == '*' {
					return "a * may only start an entry, as in *.example.com"
				}
				return fmt.Sprintf("%q is not allowed in a host name", c) + want
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "looks like an IP address but is not one" + want
	}
	return ""
}

// RefusedError is the error of a request the Policy refused.
type RefusedError struct {
	// Host is the host asked for, a name or an IP address.
	Host string
	// Addr is the address refused: with its port when a connection was
	// refused ("127.0.0.1:8080"), or without when CheckHost refused an IP
	// address. It is empty when a host name itself was refused.
	Addr string
	// Rule is the Deny entry that refused it, as written; empty when a
	// default range did.
	Rule string
	// Range names the default range that refused it, such as "loopback",
	// "link-local" or "private"; empty when a Deny entry did.
	Range string

	allowSetting string
}

// Error says what was refused and why, and how to allow it when a
// default range refused it.
func (e *RefusedError) Error() string {
	target := e.Host
	if e.Addr != "" {
		target = e.Addr
		ip := e.Addr
		if host, _, err := net.SplitHostPort(e.Addr); err == nil {
			ip = host
		}
		if e.Host != "" && e.Host != ip {
			target = e.Host + " (" + e.Addr + ")"
		}
	}
	if e.Rule != "" {
		return fmt.Sprintf("egress to %s refused: denied by the rule %q", target, e.Rule)
	}
	how := e.allowSetting
	if how == "" {
		how = "an allow rule"
	}
	return fmt.Sprintf("egress to %s refused: %s addresses are denied by default; allow with %s", target, e.Range, how)
}

// CheckHost checks a host alone, as url.URL.Hostname returns it: an IP
// address against the networks and the default ranges, a name against the
// name rules, "localhost" and names under ".localhost" as loopback. It
// resolves nothing, so a name that is not refused may still resolve to an
// address that is: the check at connection time decides. It returns a
// *RefusedError or nil; a nil *Policy refuses nothing.
func (p *Policy) CheckHost(host string) error {
	if p == nil {
		return nil
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		if refused := p.checkAddr(ip, false); refused != nil {
			refused.Host, refused.Addr = host, ip.WithZone("").String()
			return refused
		}
		return nil
	}
	allowed, refused := p.checkName(host)
	switch {
	case refused != nil:
		return refused
	case allowed:
		return nil
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		// Judged as the address it stands for.
		if refused := p.checkAddr(netip.AddrFrom4([4]byte{127, 0, 0, 1}), false); refused != nil {
			refused.Host = host
			return refused
		}
	}
	return nil
}

// CheckURL applies CheckHost to the host of rawURL. A URL that does not
// parse, or has no host (such as a template whose host is filled in
// later), passes: the check at connection time decides. A nil *Policy
// refuses nothing.
func (p *Policy) CheckURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil //nolint:nilerr // documented above: the check at connection time decides
	}
	return p.CheckHost(u.Hostname())
}

// checkName matches a host name, in lower case without a final dot,
// against the name rules: Deny first, then Allow.
func (p *Policy) checkName(host string) (allowed bool, refused *RefusedError) {
	for _, r := range p.denyNames {
		if r.matches(host) {
			return false, &RefusedError{Host: host, Rule: r.text, allowSetting: p.allowSetting}
		}
	}
	for _, r := range p.allowNames {
		if r.matches(host) {
			return true, nil
		}
	}
	return false, nil
}

// checkAddr judges an address: Deny networks first, then Allow networks,
// then nameAllowed (its host name matched an Allow entry), then the
// default ranges. It returns nil when ip may be reached.
func (p *Policy) checkAddr(ip netip.Addr, nameAllowed bool) *RefusedError {
	ip = effectiveAddr(ip)
	for _, r := range p.denyNets {
		if r.prefix.Contains(ip) {
			return &RefusedError{Rule: r.text, allowSetting: p.allowSetting}
		}
	}
	for _, r := range p.allowNets {
		if r.prefix.Contains(ip) {
			return nil
		}
	}
	if nameAllowed {
		return nil
	}
	if name := defaultRange(ip); name != "" {
		return &RefusedError{Range: name, allowSetting: p.allowSetting}
	}
	return nil
}

// effectiveAddr returns the address ip stands for: without its zone, and
// the IPv4 address an IPv4-mapped or NAT64 (64:ff9b::/96) address holds.
func effectiveAddr(ip netip.Addr) netip.Addr {
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		b := ip.As16()
		if [12]byte(b[:12]) == [12]byte{0, 0x64, 0xff, 0x9b} {
			return netip.AddrFrom4([4]byte(b[12:]))
		}
	}
	return ip
}

// defaultRange names the range refused by default that ip, an effective
// address, is in, or returns "".
func defaultRange(ip netip.Addr) string {
	if ip.Is4() {
		switch b := ip.As4(); {
		case b[0] == 0:
			return "unspecified" // 0.0.0.0/8, "this network"; Linux connects 0.0.0.0 to itself
		case b[0] == 100 && b[1]&0xc0 == 64:
			return "shared (carrier-grade NAT)" // 100.64.0.0/10
		case b == [4]byte{255, 255, 255, 255}:
			return "broadcast"
		}
	}
	switch {
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsPrivate():
		return "private"
	case ip.Is6() && ip.As16()[0] == 0xfe && ip.As16()[1]&0xc0 == 0xc0:
		return "private" // fec0::/10, the deprecated site-local range
	case ip.IsMulticast():
		return "multicast"
	}
	return ""
}

// dialKey is the context key of a dial's dialInfo.
type dialKey struct{}

// dialInfo is what DialContext learnt of a host name, for control.
type dialInfo struct {
	host        string
	nameAllowed bool
}

// DialContext connects to address ("host:port") as net.Dialer does,
// refusing a host name the name rules refuse before resolving it, and then
// every address the Policy refuses, as the socket is about to connect. A
// refusal is a *RefusedError, possibly wrapped in a *net.OpError.
func (p *Policy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("egress: %w", err)
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	info := dialInfo{host: host}
	if _, err := netip.ParseAddr(host); err != nil {
		allowed, refused := p.checkName(host)
		if refused != nil {
			return nil, refused
		}
		info.nameAllowed = allowed
	}
	return p.dialer.DialContext(context.WithValue(ctx, dialKey{}, info), network, address)
}

// control is the dialer's hook: it checks the address, "ip:port", the
// socket is about to connect to.
func (p *Policy) control(ctx context.Context, _, address string, _ syscall.RawConn) error {
	info, _ := ctx.Value(dialKey{}).(dialInfo)
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		// Never connect to what cannot be checked.
		return fmt.Errorf("egress: cannot check the address %q: %w", address, err)
	}
	if refused := p.checkAddr(ap.Addr(), info.nameAllowed); refused != nil {
		refused.Host, refused.Addr = info.host, address
		return refused
	}
	return nil
}

// Transport returns a copy of base (of http.DefaultTransport when nil)
// that dials through DialContext and uses no proxy: through a proxy, the
// address dialled would be the proxy's and the target would go unchecked.
// Dial functions base set are dropped.
func (p *Policy) Transport(base *http.Transport) *http.Transport {
	if base == nil {
		if dt, ok := http.DefaultTransport.(*http.Transport); ok {
			base = dt
		} else {
			base = &http.Transport{}
		}
	}
	t := base.Clone()
	t.Proxy = nil
	t.OnProxyConnectResponse = nil
	t.DialContext = p.DialContext
	t.DialTLSContext = nil // TLS then runs over DialContext's connection
	t.Dial = nil           //nolint:staticcheck // Deprecated, but a transport would still use it.
	t.DialTLS = nil        //nolint:staticcheck // Deprecated, but a transport would still use it.
	return t
}

// Client returns a copy of base (of an empty http.Client when nil) whose
// transport is Transport of base's. It fails when base's transport is not
// an *http.Transport, whose connections the Policy could not check.
func (p *Policy) Client(base *http.Client) (*http.Client, error) {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	var t *http.Transport
	switch rt := c.Transport.(type) {
	case nil:
	case *http.Transport:
		t = rt
	default:
		return nil, fmt.Errorf("egress: the client's transport is a %T; only an *http.Transport's connections can be checked", rt)
	}
	c.Transport = p.Transport(t)
	return c, nil
}
