package clustertest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
)

// Proxy forwards TCP connections from a loopback port to a database
// server, and can cut a node off from the database in two ways until
// Restore: Cut closes every open connection and drops every new one, as a
// stopped server or a reset network does; Partition stops moving bytes on
// every connection, open or new, as a network that silently loses packets
// does (the peers see nothing until it heals, then everything held arrives
// in order). A node reaches the database through it with a URL rewritten by
// RewriteHost.
type Proxy struct {
	ln     net.Listener
	target string
	done   chan struct{} // closed by Close

	mu     sync.Mutex
	cut    bool
	closed bool
	flow   chan struct{} // closed while bytes flow; open during a partition
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup // the accept loop and the pipes
}

// NewProxy listens on 127.0.0.1 on a free port and forwards to target
// (host:port).
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	flow := make(chan struct{})
	close(flow)
	p := &Proxy{ln: ln, target: target, done: make(chan struct{}), flow: flow, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every open connection and drops new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Partition holds every byte on every connection, open or new, until
// Restore.
func (p *Proxy) Partition() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.flow:
		p.flow = make(chan struct{})
	default: // partitioned already
	}
}

// Restore ends a cut or a partition: new connections are forwarded again,
// and held bytes flow.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	select {
	case <-p.flow:
	default:
		close(p.flow)
	}
}

// flowing waits while the proxy is partitioned; it reports false when the
// proxy closed meanwhile.
func (p *Proxy) flowing() bool {
	p.mu.Lock()
	flow := p.flow
	p.mu.Unlock()
	select {
	case <-flow:
		return true
	case <-p.done:
		return false
	}
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if !p.closed {
		close(p.done)
	}
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		if p.cut || p.closed {
			p.mu.Unlock()
			client.Close()
			continue
		}
		p.conns[client] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.forward(client)
	}
}

// forward dials the target for one client and pipes both ways until either
// side ends or the proxy closes them.
func (p *Proxy) forward(client net.Conn) {
	defer p.wg.Done()
	defer p.forget(client)
	if !p.flowing() {
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.mu.Lock()
	if p.cut || p.closed {
		p.mu.Unlock()
		server.Close()
		return
	}
	p.conns[server] = struct{}{}
	p.mu.Unlock()
	defer p.forget(server)
	done := make(chan struct{}, 2)
	go func() { p.pipe(server, client); done <- struct{}{} }()
	go func() { p.pipe(client, server); done <- struct{}{} }()
	<-done
	// One direction ended: end the other by closing both sides.
	client.Close()
	server.Close()
	<-done
}

// pipe copies src to dst, holding what it read while the proxy is
// partitioned, until either side fails.
func (p *Proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.flowing() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) forget(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// RewriteHost returns databaseURL with its host:port replaced by addr.
func RewriteHost(databaseURL, addr string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", fmt.Errorf("rewrite database URL: %w", err)
	}
	if u.Host == "" {
		return "", errors.New("rewrite database URL: it names no host")
	}
	u.Host = addr
	return u.String(), nil
}

// HostPort returns the host:port of a database URL.
func HostPort(databaseURL string) (string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", fmt.Errorf("database URL: %w", err)
	}
	if u.Host == "" {
		return "", errors.New("database URL names no host")
	}
	return u.Host, nil
}
