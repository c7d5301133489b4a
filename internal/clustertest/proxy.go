package clustertest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
)

// Proxy forwards TCP connections from a loopback port to a database
// server, and can cut a node off from the database: Cut closes every open
// connection and drops every new one until Restore. A node reaches the
// database through it with a URL rewritten by RewriteHost.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cut    bool
	closed bool
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
	p := &Proxy{ln: ln, target: target, conns: make(map[net.Conn]struct{})}
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

// Restore forwards new connections again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
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
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	// One direction ended: end the other by closing both sides.
	client.Close()
	server.Close()
	<-done
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
