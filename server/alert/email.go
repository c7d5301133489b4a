package alert

import (
	"context"
	"crypto/tls"
	"fmt"

	"github.com/wneessen/go-mail"
)

// sendEmail sends one plain-text message to all of to, with key in its
// DeliveryKeyHeader.
func (n *Notifier) sendEmail(ctx context.Context, to []string, subject, body, key string) error {
	s := n.cfg.SMTP
	msg := mail.NewMsg()
	if err := msg.From(s.From); err != nil {
		return fmt.Errorf("from %q: %w", s.From, err)
	}
	if err := msg.To(to...); err != nil {
		return fmt.Errorf("to %v: %w", to, err)
	}
	msg.Subject(subject)
	msg.SetDateWithValue(n.cfg.Now())
	msg.SetMessageID()
	msg.SetGenHeader(DeliveryKeyHeader, key)
	msg.SetBodyString(mail.TypeTextPlain, body)

	opts := []mail.Option{
		mail.WithPort(s.Port),
		mail.WithTimeout(n.cfg.Timeout),
		mail.WithTLSConfig(&tls.Config{ServerName: s.Host, RootCAs: s.RootCAs, MinVersion: tls.VersionTLS12}),
	}
	switch s.TLS {
	case TLSImplicit:
		opts = append(opts, mail.WithSSL())
	case TLSNone:
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	}
	if s.Username != "" {
		auth := mail.SMTPAuthAutoDiscover
		switch s.Auth {
		case AuthPlain:
			auth = mail.SMTPAuthPlain
		case AuthLogin:
			auth = mail.SMTPAuthLogin
		}
		opts = append(opts, mail.WithSMTPAuth(auth), mail.WithUsername(s.Username), mail.WithPassword(s.Password))
	}
	client, err := mail.NewClient(s.Host, opts...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("smtp %s:%d: %w", s.Host, s.Port, err)
	}
	return nil
}
