package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"strings"
	"time"
)

// defaultTimeout bounds a whole delivery when the caller's context has no deadline, so a server
// that stops answering cannot hold the caller forever.
const defaultTimeout = time.Minute

// SMTP delivers messages through an SMTP server, one connection per message. It upgrades to TLS
// with STARTTLS whenever the server offers it and authenticates with PLAIN when a user is set.
// net/smtp refuses PLAIN over an unencrypted connection to anything but localhost, so a password
// is never sent in the clear to a server that does not offer STARTTLS.
type SMTP struct {
	addr  string // host:port
	host  string // for the TLS certificate check and PLAIN auth
	from  *mail.Address
	auth  smtp.Auth      // nil: no authentication
	roots *x509.CertPool // nil: the system's roots; tests trust their own server's certificate
}

var _ Sender = (*SMTP)(nil)

// NewSMTP returns an SMTP sender for the server at addr (host:port) sending as from, which may
// carry a display name ("Berth <no-reply@example.com>"). user and password are the SMTP
// credentials; leave both empty for a server that needs none.
func NewSMTP(addr, from, user, password string) (*SMTP, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return nil, fmt.Errorf("%w: the SMTP address %q is not host:port", ErrInvalid, addr)
	}
	if strings.ContainsAny(from, "\r\n") {
		return nil, fmt.Errorf("%w: the sender contains a line break", ErrInvalid)
	}
	sender, err := mail.ParseAddress(from)
	if err != nil {
		return nil, fmt.Errorf("%w: the sender %q is not a single valid address", ErrInvalid, from)
	}
	if user == "" && password != "" {
		return nil, fmt.Errorf("%w: an SMTP password is set without a user", ErrInvalid)
	}
	s := &SMTP{addr: addr, host: host, from: sender}
	if user != "" {
		s.auth = smtp.PlainAuth("", user, password, host)
	}
	return s, nil
}

// Send delivers m. It is bounded by ctx: the dial honours it, the connection gets its deadline
// (or defaultTimeout when it has none), and cancelling it aborts a delivery under way.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	to, err := m.validate()
	if err != nil {
		return err
	}
	data, err := compose(s.from, to, m, time.Now())
	if err != nil {
		return fmt.Errorf("mail: compose: %w", err)
	}
	if err := s.deliver(ctx, to.Address, data); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			// The transport error is only the symptom of the cancellation or deadline.
			return fmt.Errorf("mail: send: %w", ctxErr)
		}
		return fmt.Errorf("mail: send: %w", err)
	}
	return nil
}

// deliver runs one SMTP transaction for data to rcpt.
func (s *SMTP) deliver(ctx context.Context, rcpt string, data []byte) error {
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }() // after QUIT below, or on a failure already returned
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(defaultTimeout)
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	// A deadline in the past fails every pending and later read and write at once, which is how a
	// cancellation interrupts a conversation blocked on the server. It also covers the TLS layer,
	// which sits on this connection.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // what matters is that QUIT was answered, checked below
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: s.host, RootCAs: s.roots, MinVersion: tls.VersionTLS12}); err != nil {
			return err
		}
	}
	if s.auth != nil {
		if err := c.Auth(s.auth); err != nil {
			return err
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return err
	}
	if err := c.Rcpt(rcpt); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}
