package domain

import (
	"time"

	"github.com/google/uuid"
)

// UserRole is a named role an app defines for its users (route 11 lists them).
type UserRole struct {
	ID        string
	AppID     string
	Name      string
	CreatedAt time.Time
}

// NewUserRole validates the role's name.
func NewUserRole(appID, name string, now time.Time) (UserRole, error) {
	name, err := requiredName("name", name)
	if err != nil {
		return UserRole{}, err
	}
	return UserRole{ID: uuid.NewString(), AppID: appID, Name: name, CreatedAt: now.UTC()}, nil
}
