package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
	"unicode/utf8"
)

// compose renders m as an RFC 5322 message: the headers, then a multipart/alternative body with
// the text part before the HTML part (clients prefer the last part they can show). Bodies are
// quoted-printable, so the message is 7-bit clean and no line passes 76 characters whatever the
// content, and servers without 8BITMIME take it unchanged.
func compose(from, to *mail.Address, m Message, now time.Time) ([]byte, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	parts := []struct{ contentType, content string }{
		{"text/plain; charset=utf-8", m.Text},
		{"text/html; charset=utf-8", m.HTML},
	}
	for _, p := range parts {
		if p.content == "" {
			continue
		}
		w, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {p.contentType},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, err
		}
		qp := quotedprintable.NewWriter(w)
		if _, err := qp.Write([]byte(p.content)); err != nil {
			return nil, err
		}
		if err := qp.Close(); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}

	var msg bytes.Buffer
	header := func(name, value string) { msg.WriteString(name + ": " + value + "\r\n") }
	header("From", from.String())
	header("To", to.String())
	header("Subject", encodeWords(m.Subject))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", messageID(from.Address))
	header("MIME-Version", "1.0")
	// Folded before the boundary: with it, the line would pass 78 characters.
	header("Content-Type", "multipart/alternative;\r\n boundary=\""+mw.Boundary()+"\"")
	msg.WriteString("\r\n")
	msg.Write(body.Bytes())
	return msg.Bytes(), nil
}

// wordBytes is how much of the text one encoded-word carries: 42 bytes are 56 base64 characters,
// so "Subject: =?utf-8?b?…?=" stays within the 78 characters RFC 5322 recommends for a line.
const wordBytes = 42

// encodeWords renders s as RFC 2047 encoded-words (UTF-8, base64), one folded line each. Every
// subject is encoded, not only non-ASCII ones: that also covers overlong subjects and text that
// merely looks like an encoded-word ("=?…?="), which a client would otherwise decode.
func encodeWords(s string) string {
	var words []string
	for len(s) > 0 {
		n := min(wordBytes, len(s))
		// A word must hold whole characters (RFC 2047 section 5), so cut at a rune boundary.
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		words = append(words, "=?utf-8?b?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	// Whitespace between adjacent encoded-words is not part of the text, so folding adds nothing.
	return strings.Join(words, "\r\n ")
}

// messageID returns a fresh Message-ID in the sender's domain, as RFC 5322 recommends, so the id
// is unique worldwide and replies and bounces can be tied to the message.
func messageID(from string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	domain := from[strings.LastIndexByte(from, '@')+1:]
	return "<" + hex.EncodeToString(b) + "@" + domain + ">"
}
