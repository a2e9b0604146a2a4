package domain

import (
	"github.com/berthhq/berth/pkg/fault"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Length limits of free-text fields, in characters. Names are shorter because they end up in
// emails, invoices and token claims.
const (
	maxText     = 256
	maxNameText = 128
)

// checkText rejects text that is too long, not UTF-8 or carries control characters (which would let
// a value forge lines in logs, emails or CSV exports).
func checkText(field, s string, limit int) error {
	if !utf8.ValidString(s) {
		return fault.InvalidField(field, "must be valid UTF-8")
	}
	if utf8.RuneCountInString(s) > limit {
		return fault.InvalidField(field, "must be at most %d characters", limit)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return fault.InvalidField(field, "must not contain control characters")
	}
	return nil
}

// requiredName trims a mandatory name (project, app, key, role) and checks it.
func requiredName(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fault.InvalidField(field, "is required")
	}
	return s, checkText(field, s, maxNameText)
}
