package alert_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// mailServer is a real SMTP server (github.com/emersion/go-smtp) on a
// loopback port, keeping the messages it accepts.
type mailServer struct {
	host  string
	port  int
	roots *x509.CertPool // trusts the server's self-signed certificate

	mu       sync.Mutex
	messages []receivedMail
}

// receivedMail is one message the server accepted.
type receivedMail struct {
	EnvelopeFrom string
	EnvelopeTo   []string
	OverTLS      bool
	User         string // who authenticated, if anyone
	Header       mail.Header
	Subject      string // decoded
	Body         string // decoded
}

type mailServerOptions struct {
	// tls: "starttls" offers STARTTLS, "tls" speaks TLS from the start,
	// "" offers no TLS at all.
	tls string
	// user and password, when user is set, are the only credentials
	// accepted, and mail is refused without them.
	user, password string
	// insecureAuth offers AUTH without TLS.
	insecureAuth bool
}

func startMailServer(t *testing.T, opts mailServerOptions) *mailServer {
	t.Helper()
	ms := &mailServer{host: "127.0.0.1"}
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &mailSession{server: ms, opts: opts, conn: c}, nil
	}))
	s.Domain = "localhost"
	s.ReadTimeout = 10 * time.Second
	s.WriteTimeout = 10 * time.Second
	s.AllowInsecureAuth = opts.insecureAuth
	var tlsConfig *tls.Config
	if opts.tls != "" {
		cert, roots := selfSignedCert(t)
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ms.roots = roots
	}
	if opts.tls == "starttls" {
		s.TLSConfig = tlsConfig // go-smtp offers STARTTLS when it has a TLS config
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts.tls == "tls" {
		l = tls.NewListener(l, tlsConfig)
	}
	ms.port = l.Addr().(*net.TCPAddr).Port
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing the SMTP server: %v", err)
		}
		if err := <-served; err != nil && !errors.Is(err, smtp.ErrServerClosed) {
			t.Errorf("SMTP server: %v", err)
		}
	})
	return ms
}

// Messages returns the messages accepted so far.
func (ms *mailServer) Messages() []receivedMail {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return append([]receivedMail(nil), ms.messages...)
}

type mailSession struct {
	server *mailServer
	opts   mailServerOptions
	conn   *smtp.Conn
	user   string
	from   string
	to     []string
}

func (s *mailSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *mailSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		if s.opts.user == "" || user != s.opts.user || password != s.opts.password {
			return smtp.ErrAuthFailed
		}
		s.user = user
		return nil
	}), nil
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.opts.user != "" && s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	got := receivedMail{EnvelopeFrom: s.from, EnvelopeTo: s.to, User: s.user, Header: msg.Header}
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

func (s *mailSession) Reset() { s.from, s.to = "", nil }

func (s *mailSession) Logout() error { return nil }

// selfSignedCert makes a certificate for 127.0.0.1 and a pool trusting it.
func selfSignedCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "chime alert test"},
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
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, roots
}
