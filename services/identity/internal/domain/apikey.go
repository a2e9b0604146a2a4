package domain

import (
	"github.com/berthhq/berth/pkg/fault"
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
	return "", fault.InvalidField("type", "must be read or write")
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
	// RevokedAt is when the key was revoked (nil while it works); a revoked key never verifies.
	RevokedAt *time.Time
}

// maxDescription bounds an API key's description: operators write a sentence or two about what
// the key is for, never a document.
const maxDescription = 1024

// NewAPIKey validates the key's metadata. id and hash come from the key generator.
func NewAPIKey(id, appID string, typ KeyType, name, description string, hash []byte, now time.Time) (APIKey, error) {
	name, err := requiredName("name", name)
	if err != nil {
		return APIKey{}, err
	}
	if err := checkText("description", description, maxDescription); err != nil {
		return APIKey{}, err
	}
	now = now.UTC()
	return APIKey{
		ID: id, AppID: appID, Type: typ, Name: name, Description: description, Hash: hash,
		CreatedAt: now, UpdatedAt: now,
	}, nil
}

// Describe changes the key's name and/or description (nil = unchanged) for route 2. At least one
// must be given; the type never changes here, since a read key silently becoming a write key
// would widen what every holder of the secret can do.
func (k *APIKey) Describe(name, description *string, now time.Time) error {
	if name == nil && description == nil {
		return fault.InvalidField("name", "name or description is required")
	}
	next := *k
	if name != nil {
		n, err := requiredName("name", *name)
		if err != nil {
			return err
		}
		next.Name = n
	}
	if description != nil {
		if err := checkText("description", *description, maxDescription); err != nil {
			return err
		}
		next.Description = *description
	}
	next.UpdatedAt = now.UTC()
	*k = next
	return nil
}
