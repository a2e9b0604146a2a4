package domain

import (
	"time"
)

// KeyType is what an API key may do: read keys call read routes, write keys call write routes.
type KeyType string

// The two key types the contract names.
const (
	KeyRead  KeyType = "read"
	KeyWrite KeyType = "write"
)

// ParseKeyType accepts exactly "read" or "write".
func ParseKeyType(s string) (KeyType, error) {
	switch KeyType(s) {
	case KeyRead, KeyWrite:
		return KeyType(s), nil
	}
	return "", Invalid("type", "must be read or write")
}

// APIKey is a stored API key. Only the HMAC of its secret is kept; the full key is shown once.
type APIKey struct {
	ID          string
	AppID       string
	Type        KeyType
	Name        string
	Description string
	Hash        []byte
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// NewAPIKey validates the key's metadata. id and hash come from the key generator.
func NewAPIKey(id, appID string, typ KeyType, name, description string, hash []byte, now time.Time) (APIKey, error) {
	name, err := requiredName("name", name)
	if err != nil {
		return APIKey{}, err
	}
	if err := checkText("description", description, maxText); err != nil {
		return APIKey{}, err
	}
	now = now.UTC()
	return APIKey{
		ID: id, AppID: appID, Type: typ, Name: name, Description: description, Hash: hash,
		CreatedAt: now, UpdatedAt: now,
	}, nil
}
