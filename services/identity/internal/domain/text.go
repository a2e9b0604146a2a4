package domain

import (
	"strings"
	"unicode/utf8"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/text"
)

// Length limits of free-text fields, in characters. Names are shorter because they end up in
// emails, invoices and token claims.
const (
	maxText     = 256
	maxNameText = 128
)

// checkText rejects text that breaks the shared text rule (pkg/text: invalid UTF-8, NUL or any
// control character, which would let a value forge lines in logs, emails or CSV exports) or is too
// long. Every identity text field is single-line.
func checkText(field, s string, limit int) error {
	if err := text.Check(field, s); err != nil {
		return err
	}
	if utf8.RuneCountInString(s) > limit {
		return fault.InvalidField(field, "must be at most %d characters", limit)
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
