package domain

import (
	"github.com/berthhq/berth/pkg/fault"
	"strings"
)

// IsUUID reports whether s is a UUID in the canonical 8-4-4-4-12 hex form (either case). Other
// spellings uuid parsers accept (braces, urn:uuid:, no dashes) are refused so that one tenant has
// one spelling on the wire.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !isHex(r) {
				return false
			}
		}
	}
	return true
}

// ParseID returns the canonical (lower-case) form of a tenant or app id; field names the id in
// the error.
func ParseID(field, s string) (string, error) {
	if !IsUUID(s) {
		return "", fault.InvalidField(field, "must be a UUID")
	}
	return canonicalUUID(s), nil
}

func canonicalUUID(s string) string { return strings.ToLower(s) }

func isHex(r rune) bool {
	return (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F')
}
