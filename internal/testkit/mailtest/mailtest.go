// Package mailtest runs a real SMTP server (github.com/emersion/go-smtp) on
// a loopback port for tests of what chime sends by e-mail, and keeps the
// messages it accepts.
//
// The server can offer STARTTLS or speak TLS from the start, with a
// self-signed certificate for 127.0.0.1 that Server.RootCAs trusts (and
// Server.CAFile holds, for a child process to trust through
// SSL_CERT_FILE), and can require AUTH PLAIN with one user name and
// password. It stops when the test ends.
package mailtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// TLS says how the server encrypts its connections.
type TLS string

// TLS modes.
const (
	// NoTLS offers no encryption at all.
	NoTLS TLS = ""
	// StartTLS offers the STARTTLS command on a plain connection.
	StartTLS TLS = "starttls"
	// ImplicitTLS speaks TLS from the first byte.
	ImplicitTLS TLS = "tls"
)

// Options configure Start. A nil *Options means the defaults: no TLS, no
// AUTH, every message accepted.
type Options struct {
	// TLS is how the server encrypts. Defaults to NoTLS.
	TLS TLS
	// User and Password, when User is set, are the only credentials AUTH
	// accepts, and mail is refused until a client authenticates with them.
	// Defaults to none: AUTH always fails and is not needed.
	User, Password string
	// InsecureAuth offers AUTH on a connection that is not encrypted.
	// Defaults to false: AUTH only after STARTTLS or over implicit TLS.
	InsecureAuth bool
}

// Server is a running SMTP server.
type Server struct {
	// Host and Port are where it listens: "127.0.0.1" and a free port.
	Host string
	Port int
	// RootCAs trusts the server's certificate; nil with NoTLS.
	RootCAs *x509.CertPool
	// CAFile is a PEM file of the server's certificate, in the test's
	// temporary directory, for a child process to trust by setting
	// SSL_CERT_FILE to it; "" with NoTLS.
	CAFile string

	mu       sync.Mutex
	messages []Message
}

// Message is one message the server accepted.
type Message struct {
	// EnvelopeFrom and EnvelopeTo are the addresses of MAIL FROM and
	// RCPT TO.
	EnvelopeFrom string
	EnvelopeTo   []string
	// OverTLS reports whether the message came over an encrypted
	// connection.
	OverTLS bool
	// User is who authenticated, or "".
	User   string
	Header mail.Header
	// Subject is the decoded Subject header.
	Subject string
	// Body is the body with its quoted-printable transfer encoding
	// decoded.
	Body string
}

// Start runs a server until the test ends; a server that fails to stop
// cleanly fails the test.
func Start(t testing.TB, opts *Options) *Server {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	ms := &Server{Host: "127.0.0.1"}
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{server: ms, opts: o, conn: c}, nil
	}))
	s.Domain = "localhost"
	s.ReadTimeout = 10 * time.Second
	s.WriteTimeout = 10 * time.Second
	s.AllowInsecureAuth = o.InsecureAuth
	var tlsConfig *tls.Config
	if o.TLS != NoTLS {
		cert := selfSignedCert(t)
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ms.RootCAs = x509.NewCertPool()
		ms.RootCAs.AddCert(cert.Leaf)
		ms.CAFile = filepath.Join(t.TempDir(), "mailtest-ca.pem")
		pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Leaf.Raw})
		if err := os.WriteFile(ms.CAFile, pemCert, 0o600); err != nil {
			t.Fatalf("mailtest: %v", err)
		}
	}
	if o.TLS == StartTLS {
		s.TLSConfig = tlsConfig // go-smtp offers STARTTLS when it has a TLS config
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: %v", err)
	}
	if o.TLS == ImplicitTLS {
		l = tls.NewListener(l, tlsConfig)
	}
	ms.Port = l.Addr().(*net.TCPAddr).Port
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("mailtest: closing the SMTP server: %v", err)
		}
		if err := <-served; err != nil && !errors.Is(err, smtp.ErrServerClosed) {
			t.Errorf("mailtest: SMTP server: %v", err)
		}
	})
	return ms
}

// Messages returns the messages accepted so far, oldest first.
func (ms *Server) Messages() []Message {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return append([]Message(nil), ms.messages...)
}

// session is one SMTP connection.
type session struct {
	server *Server
	opts   Options
	conn   *smtp.Conn
	user   string
	from   string
	to     []string
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		if s.opts.User == "" || user != s.opts.User || password != s.opts.Password {
			return smtp.ErrAuthFailed
		}
		s.user = user
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.opts.User != "" && s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	got := Message{EnvelopeFrom: s.from, EnvelopeTo: s.to, User: s.user, Header: msg.Header}
	_, got.OverTLS = s.conn.TLSConnectionState()
	if got.Subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return err
	}
	body := msg.Body
	if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	got.Body = string(b)
	s.server.mu.Lock()
	s.server.messages = append(s.server.messages, got)
	s.server.mu.Unlock()
	return nil
}

func (s *session) Reset() { s.from, s.to = "", nil }

func (s *session) Logout() error { return nil }

// selfSignedCert makes a certificate for 127.0.0.1, valid for an hour
// either side of now.
func selfSignedCert(t testing.TB) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("mailtest: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "chime mailtest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("mailtest: %v", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("mailtest: %v", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}
