package domain

import (
	"github.com/berthhq/berth/pkg/fault"
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

// ErrMemberTaken is returned by member stores when the project already has a member with that
// email (case-insensitively): one person, one operator identity per project.
var ErrMemberTaken = fault.InvalidField("email", "is already a member of this project")

// ProjectMember is a person who operates a project's apps (route 2) with an operator token.
type ProjectMember struct {
	ID        string
	ProjectID string
	Email     string
	Name      string
	CreatedAt time.Time
	// AccountID is the member account of the person once they accepted the invitation ("" before),
	// AcceptedAt when they did.
	AccountID  string
	AcceptedAt *time.Time
	// Language is the language the member was invited in ("" when none was chosen); identity's
	// later mails to the member are written in it.
	Language string
}

// NewProjectMember validates the member's email and name and mints the member.
func NewProjectMember(projectID, email, name string, now time.Time) (ProjectMember, error) {
	email, err := checkEmail("email", email)
	if err != nil {
		return ProjectMember{}, err
	}
	if name, err = requiredName("name", name); err != nil {
		return ProjectMember{}, err
	}
	return ProjectMember{ID: uuid.NewString(), ProjectID: projectID, Email: email, Name: name, CreatedAt: now.UTC()}, nil
}
