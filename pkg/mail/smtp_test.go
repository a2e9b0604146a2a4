package mail

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"
)

// delivery is what the fake server recorded of one SMTP transaction.
type delivery struct {
	from, rcpt  string
	auth        string // decoded AUTH PLAIN response, "" when the client did not authenticate
	authOverTLS bool
	data        []byte
}

// fakeSMTP is an in-test SMTP server: EHLO, optional STARTTLS, AUTH PLAIN, MAIL, RCPT, DATA, QUIT.
type fakeSMTP struct {
	ln  net.Listener
	tls *tls.Config // nil: STARTTLS is not offered
	// silent servers accept connections and never greet, to hold a client in its first read.
	silent   bool
	accepted chan struct{}

	mu         sync.Mutex
	deliveries []delivery
	wg         sync.WaitGroup
}

func startFakeSMTP(t *testing.T, tlsConfig *tls.Config, silent bool) *fakeSMTP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeSMTP{ln: ln, tls: tlsConfig, silent: silent, accepted: make(chan struct{}, 16)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted <- struct{}{}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer conn.Close()
				if s.silent {
					_, _ = io.Copy(io.Discard, conn) // returns when the client hangs up
					return
				}
				s.serve(conn)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *fakeSMTP) addr() string { return s.ln.Addr().String() }

func (s *fakeSMTP) recorded() []delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]delivery(nil), s.deliveries...)
}

func (s *fakeSMTP) serve(conn net.Conn) {
	tc := textproto.NewConn(conn)
	inTLS := false
	var d delivery
	reply := func(lines ...string) {
		for _, l := range lines {
			_ = tc.PrintfLine("%s", l)
		}
	}
	reply("220 fake ESMTP")
	for {
		line, err := tc.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			lines := []string{"250-fake"}
			if s.tls != nil && !inTLS {
				lines = append(lines, "250-STARTTLS")
			}
			reply(append(lines, "250 AUTH PLAIN")...)
		case "STARTTLS":
			reply("220 go ahead")
			tlsConn := tls.Server(conn, s.tls)
			if tlsConn.Handshake() != nil {
				return
			}
			conn, tc, inTLS = tlsConn, textproto.NewConn(tlsConn), true
		case "AUTH":
			_, b64, _ := strings.Cut(arg, " ")
			raw, _ := base64.StdEncoding.DecodeString(b64)
			d.auth, d.authOverTLS = string(raw), inTLS
			reply("235 ok")
		case "MAIL":
			d.from = strings.TrimPrefix(arg, "FROM:")
			reply("250 ok")
		case "RCPT":
			d.rcpt = strings.TrimPrefix(arg, "TO:")
			reply("250 ok")
		case "DATA":
			reply("354 go ahead")
			data, err := tc.ReadDotBytes()
			if err != nil {
				return
			}
			d.data = data
			s.mu.Lock()
			s.deliveries = append(s.deliveries, d)
			s.mu.Unlock()
			reply("250 queued")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 not implemented")
		}
	}
}

// testTLS returns a server config with a fresh self-signed certificate for 127.0.0.1 and a pool
// that trusts it.
func testTLS(t *testing.T) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "fake smtp"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, pool
}

func newTestSMTP(t *testing.T, addr, user, password string) *SMTP {
	t.Helper()
	s, err := NewSMTP(addr, "Berth Team <no-reply@berth.example>", user, password)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var sample = Message{
	To:      "Ada Lovelace <ada@example.com>",
	Subject: "Willkommen bei Berth – Ihr Zugang",
	Text:    "Hello Ada,\nyour code is 123456.\n.\nA line that is far longer than seventy-six characters, so quoted-printable has to wrap it.",
	HTML:    `<p>Hello <b>Ada</b>, your code is <code>123456</code>. Grüße</p>`,
}

// parsed is a received message taken apart.
type parsed struct {
	header mail.Header
	parts  map[string]string // content type -> decoded body
	order  []string
}

func parseMessage(t *testing.T, data []byte) parsed {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("message does not parse: %v\n%s", err, data)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type = %q (%v)", msg.Header.Get("Content-Type"), err)
	}
	p := parsed{header: msg.Header, parts: map[string]string{}}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if cte := part.Header.Get("Content-Transfer-Encoding"); cte != "quoted-printable" {
			t.Errorf("part Content-Transfer-Encoding = %q", cte)
		}
		body, err := io.ReadAll(quotedprintable.NewReader(part))
		if err != nil {
			t.Fatal(err)
		}
		ct := part.Header.Get("Content-Type")
		p.parts[ct] = string(body)
		p.order = append(p.order, ct)
	}
	return p
}

func TestSMTPDeliversAMultipartMessage(t *testing.T) {
	serverTLS, roots := testTLS(t)
	tests := []struct {
		name      string
		tls       *tls.Config
		user      string
		wantAuth  string
		wantTLSed bool
	}{
		{"STARTTLS offered, with auth", serverTLS, "mailer", "\x00mailer\x00s3cret", true},
		{"no STARTTLS, no auth", nil, "", "", false},
		{"no STARTTLS, auth to localhost", nil, "mailer", "\x00mailer\x00s3cret", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := startFakeSMTP(t, tt.tls, false)
			password := ""
			if tt.user != "" {
				password = "s3cret"
			}
			s := newTestSMTP(t, server.addr(), tt.user, password)
			s.roots = roots
			if err := s.Send(t.Context(), sample); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := server.recorded()
			if len(got) != 1 {
				t.Fatalf("%d deliveries, want 1", len(got))
			}
			d := got[0]
			if d.from != "<no-reply@berth.example>" || d.rcpt != "<ada@example.com>" {
				t.Errorf("envelope = %s -> %s", d.from, d.rcpt)
			}
			if d.auth != tt.wantAuth || d.authOverTLS != tt.wantTLSed {
				t.Errorf("auth = %q over TLS %v, want %q over TLS %v", d.auth, d.authOverTLS, tt.wantAuth, tt.wantTLSed)
			}
			// The server's dot reader has turned the wire's CRLF into LF.
			for _, line := range bytes.Split(d.data, []byte("\n")) {
				if len(line) > 78 {
					t.Errorf("line longer than 78 characters: %q", line)
				}
			}

			m := parseMessage(t, d.data)
			dec := new(mime.WordDecoder)
			subject, err := dec.DecodeHeader(m.header.Get("Subject"))
			if err != nil || subject != sample.Subject {
				t.Errorf("Subject decodes to %q (%v), want %q", subject, err, sample.Subject)
			}
			if !strings.HasPrefix(m.header.Get("Subject"), "=?utf-8?b?") {
				t.Errorf("Subject is not RFC 2047 encoded: %q", m.header.Get("Subject"))
			}
			if from, err := m.header.AddressList("From"); err != nil || len(from) != 1 || from[0].Name != "Berth Team" || from[0].Address != "no-reply@berth.example" {
				t.Errorf("From = %q", m.header.Get("From"))
			}
			if to, err := m.header.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != "ada@example.com" {
				t.Errorf("To = %q", m.header.Get("To"))
			}
			if date, err := m.header.Date(); err != nil || time.Since(date).Abs() > time.Hour {
				t.Errorf("Date = %q (%v)", m.header.Get("Date"), err)
			}
			if id := m.header.Get("Message-ID"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@berth.example>") || len(id) < 20 {
				t.Errorf("Message-ID = %q", id)
			}
			if m.header.Get("MIME-Version") != "1.0" {
				t.Errorf("MIME-Version = %q", m.header.Get("MIME-Version"))
			}
			wantOrder := []string{"text/plain; charset=utf-8", "text/html; charset=utf-8"}
			if strings.Join(m.order, ",") != strings.Join(wantOrder, ",") {
				t.Errorf("parts = %v, want %v (text first, HTML last)", m.order, wantOrder)
			}
			// quoted-printable turns line ends into CRLF on the wire; the text is otherwise intact.
			if got := strings.ReplaceAll(m.parts[wantOrder[0]], "\r\n", "\n"); got != sample.Text {
				t.Errorf("text part = %q, want %q", got, sample.Text)
			}
			if got := m.parts[wantOrder[1]]; got != sample.HTML {
				t.Errorf("HTML part = %q, want %q", got, sample.HTML)
			}
		})
	}
}

func TestSMTPSendsOnlyTheBodiesThatAreSet(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		want []string
	}{
		{"text only", Message{To: "ada@example.com", Subject: "s", Text: "plain"}, []string{"text/plain; charset=utf-8"}},
		{"HTML only", Message{To: "ada@example.com", Subject: "s", HTML: "<p>rich</p>"}, []string{"text/html; charset=utf-8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := startFakeSMTP(t, nil, false)
			if err := newTestSMTP(t, server.addr(), "", "").Send(t.Context(), tt.msg); err != nil {
				t.Fatal(err)
			}
			m := parseMessage(t, server.recorded()[0].data)
			if strings.Join(m.order, ",") != strings.Join(tt.want, ",") {
				t.Errorf("parts = %v, want %v", m.order, tt.want)
			}
		})
	}
}

func TestEncodeWordsKeepsLongAndMultibyteSubjectsIntact(t *testing.T) {
	tests := []string{
		"",
		"Plain ASCII",
		"=?utf-8?q?looks_encoded?=",
		strings.Repeat("ü", 100), // two-byte runes straddle every word boundary
		strings.Repeat("a", 300) + "😀" + strings.Repeat("€", 50),
	}
	dec := new(mime.WordDecoder)
	for _, s := range tests {
		enc := encodeWords(s)
		for _, line := range strings.Split(enc, "\r\n") {
			if len("Subject: ")+len(line) > 78 {
				t.Errorf("encoded line too long: %q", line)
			}
		}
		// Reading a header unfolds it: CRLF + space becomes a space.
		got, err := dec.DecodeHeader(strings.ReplaceAll(enc, "\r\n", ""))
		if err != nil || got != s {
			t.Errorf("encodeWords(%q) decodes to %q (%v)", s, got, err)
		}
	}
}

func TestSMTPRejectsInvalidMessagesWithoutConnecting(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
	}{
		{"CRLF in To", Message{To: "ada@example.com\r\nBcc: eve@example.com", Subject: "s", Text: "t"}},
		{"LF in To", Message{To: "ada@example.com\nBcc: eve@example.com", Subject: "s", Text: "t"}},
		{"CR in Subject", Message{To: "ada@example.com", Subject: "hi\rBcc: eve@example.com", Text: "t"}},
		{"LF in Subject", Message{To: "ada@example.com", Subject: "hi\nBcc: eve@example.com", Text: "t"}},
		{"two recipients", Message{To: "ada@example.com, eve@example.com", Subject: "s", Text: "t"}},
		{"not an address", Message{To: "ada", Subject: "s", Text: "t"}},
		{"empty To", Message{Subject: "s", Text: "t"}},
		{"no body", Message{To: "ada@example.com", Subject: "s"}},
		{"invalid UTF-8", Message{To: "ada@example.com", Subject: "s", Text: "\xff\xfe"}},
	}
	server := startFakeSMTP(t, nil, false)
	s := newTestSMTP(t, server.addr(), "", "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Send(t.Context(), tt.msg); !errors.Is(err, ErrInvalid) {
				t.Errorf("Send = %v, want ErrInvalid", err)
			}
		})
	}
	if n := len(server.accepted); n != 0 {
		t.Errorf("%d connections opened for invalid messages", n)
	}
}

func TestNewSMTPValidatesItsConfiguration(t *testing.T) {
	tests := []struct {
		name, addr, from, user, password string
		ok                               bool
	}{
		{"valid", "smtp.example.com:587", "Berth <no-reply@example.com>", "u", "p", true},
		{"valid without auth", "127.0.0.1:25", "no-reply@example.com", "", "", true},
		{"no port", "smtp.example.com", "no-reply@example.com", "", "", false},
		{"empty port", "smtp.example.com:", "no-reply@example.com", "", "", false},
		{"no host", ":587", "no-reply@example.com", "", "", false},
		{"sender not an address", "smtp.example.com:587", "no-reply", "", "", false},
		{"two senders", "smtp.example.com:587", "a@example.com, b@example.com", "", "", false},
		{"line break in sender", "smtp.example.com:587", "a@example.com\r\nBcc: e@example.com", "", "", false},
		{"password without user", "smtp.example.com:587", "a@example.com", "", "p", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSMTP(tt.addr, tt.from, tt.user, tt.password)
			if tt.ok && err != nil {
				t.Errorf("NewSMTP: %v", err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalid) {
				t.Errorf("NewSMTP = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestSMTPSendStopsWhenTheContextEnds(t *testing.T) {
	t.Run("cancelled while the server is silent", func(t *testing.T) {
		server := startFakeSMTP(t, nil, true)
		s := newTestSMTP(t, server.addr(), "", "")
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-server.accepted // the client is now waiting for a greeting that never comes
			cancel()
		}()
		if err := s.Send(ctx, sample); !errors.Is(err, context.Canceled) {
			t.Errorf("Send = %v, want context.Canceled", err)
		}
	})
	t.Run("already expired", func(t *testing.T) {
		server := startFakeSMTP(t, nil, false)
		s := newTestSMTP(t, server.addr(), "", "")
		ctx, cancel := context.WithDeadline(t.Context(), time.Unix(1, 0))
		defer cancel()
		if err := s.Send(ctx, sample); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Send = %v, want context.DeadlineExceeded", err)
		}
		if len(server.recorded()) != 0 {
			t.Errorf("message delivered despite the expired context")
		}
	})
}

func TestSMTPReportsAnUntrustedCertificate(t *testing.T) {
	serverTLS, _ := testTLS(t)
	server := startFakeSMTP(t, serverTLS, false)
	s := newTestSMTP(t, server.addr(), "mailer", "s3cret") // system roots: the test certificate is not trusted
	if err := s.Send(t.Context(), sample); err == nil || errors.Is(err, ErrInvalid) {
		t.Fatalf("Send = %v, want a TLS failure", err)
	}
	if len(server.recorded()) != 0 {
		t.Errorf("message delivered over an unverified connection")
	}
}
