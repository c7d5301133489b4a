package clustertest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestFiguresLine(t *testing.T) {
	f := Figures{Dialect: "postgres", Scenario: "kill9", Nodes: 3, Triggers: 2, Recovery: 2345 * time.Millisecond,
		Result: Result{Fires: 10, Lags: []time.Duration{time.Millisecond, 2 * time.Millisecond, 9 * time.Millisecond}}}
	want := "cluster: dialect=postgres scenario=kill9 nodes=3 triggers=2 fires=10 duplicates=0 misses=0 recovery=2.345s lag_p50=2ms lag_p99=9ms lag_max=9ms"
	if got := f.String(); got != want {
		t.Errorf("Figures.String:\n got %s\nwant %s", got, want)
	}
}

// echoServer answers each line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(conn net.Conn, msg string) (string, error) {
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return "", err
	}
	if _, err := fmt.Fprintln(conn, msg); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimSpace(line), err
}

func TestProxyCutAndRestore(t *testing.T) {
	p, err := NewProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	before, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	if got, err := roundTrip(before, "hello"); err != nil || got != "hello" {
		t.Fatalf("through the proxy: %q, %v", got, err)
	}

	p.Cut()
	if _, err := roundTrip(before, "still there?"); err == nil {
		t.Error("a connection open before the cut still works after it")
	}
	during, err := net.Dial("tcp", p.Addr())
	if err == nil {
		if _, err := roundTrip(during, "anyone?"); err == nil {
			t.Error("a connection opened during the cut works")
		}
		during.Close()
	}

	p.Restore()
	after, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if got, err := roundTrip(after, "back"); err != nil || got != "back" {
		t.Errorf("after restore: %q, %v", got, err)
	}
}

func TestRewriteHost(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"postgres://postgres@127.0.0.1:5432/test?sslmode=disable&search_path=chime_x", "postgres://postgres@127.0.0.1:6000/test?sslmode=disable&search_path=chime_x"},
		{"mysql://root:pw@127.0.0.1:3306/chime_x", "mysql://root:pw@127.0.0.1:6000/chime_x"},
	} {
		got, err := RewriteHost(tt.in, "127.0.0.1:6000")
		if err != nil || got != tt.want {
			t.Errorf("RewriteHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := RewriteHost("sqlite:/tmp/x.db", "127.0.0.1:6000"); err == nil {
		t.Error("RewriteHost accepted a URL without a host")
	}
}

func TestProxyPartitionHoldsBytesUntilRestore(t *testing.T) {
	p, err := NewProxy(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	open, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if got, err := roundTrip(open, "hello"); err != nil || got != "hello" {
		t.Fatalf("through the proxy: %q, %v", got, err)
	}

	p.Partition()
	held, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	readers := make(map[string]*bufio.Reader)
	for name, c := range map[string]net.Conn{"open": open, "new": held} {
		if _, err := fmt.Fprintln(c, name); err != nil {
			t.Fatal(err)
		}
		// A short deadline: nothing may arrive while partitioned.
		if err := c.SetReadDeadline(time.Now().Add(300 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(c)
		if line, err := r.ReadString('\n'); err == nil {
			t.Errorf("%s connection answered %q during the partition", name, line)
		}
		readers[name] = r
	}

	p.Restore()
	for name, c := range map[string]net.Conn{"open": open, "new": held} {
		if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Fatal(err)
		}
		line, err := readers[name].ReadString('\n')
		if err != nil || strings.TrimSpace(line) != name {
			t.Errorf("%s connection after the partition: %q, %v; want what it sent during it", name, line, err)
		}
	}
}
