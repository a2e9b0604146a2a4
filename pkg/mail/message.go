package mail

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"unicode/utf8"
)

// Message is one email to one recipient. Text and HTML are alternative renderings of the same
// content; at least one must be set, and mail clients show the richest one they support.
type Message struct {
	To      string // a single address, optionally with a display name: "Ada <ada@example.com>"
	Subject string
	Text    string
	HTML    string
}

// Sender delivers messages. Implementations return an error wrapping ErrInvalid for a message
// that can never be delivered, so callers can tell bad input from a failed delivery.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// ErrInvalid marks a message (or sender configuration) that is malformed. Retrying never helps.
var ErrInvalid = errors.New("mail: invalid message")

// validate checks m and returns its parsed recipient. CR and LF are refused in every header value
// before any parsing: they are how a value would smuggle extra headers (or recipients) in.
func (m Message) validate() (*mail.Address, error) {
	if strings.ContainsAny(m.To, "\r\n") {
		return nil, fmt.Errorf("%w: the recipient contains a line break", ErrInvalid)
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		return nil, fmt.Errorf("%w: the subject contains a line break", ErrInvalid)
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return nil, fmt.Errorf("%w: the recipient is not a single valid address", ErrInvalid)
	}
	if m.Text == "" && m.HTML == "" {
		return nil, fmt.Errorf("%w: the message has no body", ErrInvalid)
	}
	// Every part is declared charset=utf-8; bytes that are not UTF-8 would be shown as garbage.
	for _, s := range []string{m.Subject, m.Text, m.HTML} {
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("%w: the message is not valid UTF-8", ErrInvalid)
		}
	}
	return to, nil
}
