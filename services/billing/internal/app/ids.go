package app

import "github.com/google/uuid"

// isUUID reports whether s is a UUID in the canonical 36-character form.
func isUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}
