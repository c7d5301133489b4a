package mailtest_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/smtp"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/chime-scheduler/chime/internal/testkit/mailtest"
)

func TestStartTLSWithAuth(t *testing.T) {
	t.Parallel()
	ms := mailtest.Start(t, &mailtest.Options{TLS: mailtest.StartTLS, User: "alerts", Password: "s3cret"})
	addr := net.JoinHostPort(ms.Host, strconv.Itoa(ms.Port))

	// The CA file holds the certificate RootCAs trusts.
	raw, err := os.ReadFile(ms.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("CAFile holds no PEM certificate:\n%s", raw)
	}
	fromFile := x509.NewCertPool()
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	fromFile.AddCert(cert)
	if !fromFile.Equal(ms.RootCAs) {
		t.Error("CAFile and RootCAs trust different certificates")
	}

	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Without TLS and AUTH, mail is refused.
	if err := c.Mail("chime@example.com"); err == nil {
		t.Error("MAIL FROM before AUTH was accepted")
	}
	if err := c.StartTLS(&tls.Config{ServerName: ms.Host, RootCAs: fromFile}); err != nil {
		t.Fatalf("STARTTLS with the CA file's certificate: %v", err)
	}
	if err := c.Auth(smtp.PlainAuth("", "alerts", "s3cret", ms.Host)); err != nil {
		t.Fatalf("AUTH: %v", err)
	}
	if err := c.Mail("chime@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt("ops@example.com"); err != nil {
		t.Fatal(err)
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	msg := "Subject: =?utf-8?q?Job_=C3=BCber_failed?=\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nerror: status 500 =3D bad\r\n"
	if _, err := w.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}

	got := ms.Messages()
	if len(got) != 1 {
		t.Fatalf("Messages = %d, want 1", len(got))
	}
	m := got[0]
	if m.EnvelopeFrom != "chime@example.com" || !slices.Equal(m.EnvelopeTo, []string{"ops@example.com"}) ||
		!m.OverTLS || m.User != "alerts" || m.Subject != "Job über failed" || m.Body != "error: status 500 = bad\r\n" {
		t.Errorf("message = %+v", m)
	}
}

func TestNoTLS(t *testing.T) {
	t.Parallel()
	ms := mailtest.Start(t, nil)
	if ms.RootCAs != nil || ms.CAFile != "" {
		t.Errorf("a server without TLS has RootCAs %v and CAFile %q", ms.RootCAs, ms.CAFile)
	}
	addr := net.JoinHostPort(ms.Host, strconv.Itoa(ms.Port))
	if err := smtp.SendMail(addr, nil, "a@example.com", []string{"b@example.com"}, []byte("Subject: hi\r\n\r\nbody\r\n")); err != nil {
		t.Fatalf("SendMail: %v", err)
	}
	if got := ms.Messages(); len(got) != 1 || got[0].OverTLS || got[0].User != "" || got[0].Subject != "hi" {
		t.Errorf("Messages = %+v, want one plain message", got)
	}
}
