package domain

import (
	"time"

	"github.com/google/uuid"
)

// Project groups the apps of one customer.
type Project struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// NewProject validates the name and mints the project.
func NewProject(name string, now time.Time) (Project, error) {
	name, err := requiredName("name", name)
	if err != nil {
		return Project{}, err
	}
	return Project{ID: uuid.NewString(), Name: name, CreatedAt: now.UTC()}, nil
}
