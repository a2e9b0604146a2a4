package domain

import (
	"github.com/berthhq/berth/pkg/fault"
	"strings"
	"time"

	"github.com/google/uuid"
)

// User is an end user of an app. Field names follow the contract's user item; the idp*/sign-in
// fields are the extra ones a tenant read lists.
type User struct {
	ID       string
	AppID    string
	TenantID string // "" when the user belongs to no tenant

	Language                  string
	Salutation                string
	SalutationOther           string
	AcceptedNewsletter        bool
	AcceptedNewsletterDate    string // RFC 3339, set when the user opts in
	LastAskedNewsletterSignUp string
	NewsletterMemberID        string

	Name              string
	GivenName         string
	FamilyName        string
	MiddleName        string
	Nickname          string
	PreferredUsername string
	Profile           string
	Picture           string
	Website           string
	Email             string
	EmailVerified     bool
	Gender            string
	OtherGender       string
	Birthdate         string // YYYY-MM-DD or ""
	Zoneinfo          string
	Locale            string
	PhoneNumber       string

	PhoneNumberVerified bool
	Frozen              bool
	Deleted             bool
	VerifiedByAdmin     bool
	IdpAEmailVerified   bool
	IdpBEmailVerified   bool
	IdpCEmailVerified   bool
	IdpDEmailVerified   bool

	LastSignInAt *time.Time // nil until the first sign-in
	LastSignInIP string

	// ReferredBy is the id of the user whose invite (route 23) this user signed up with, or "".
	ReferredBy string

	// PasswordHash is the argon2id hash of the user's password in PHC form ("" = no password, e.g.
	// users provisioned by an operator). It never leaves the service.
	PasswordHash string

	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewUser creates a user of appID from an initial profile, validated by the same rules as route 18.
// The email is required; tenantID is "" or a UUID.
func NewUser(appID, tenantID string, profile UserPatch, emailVerified bool, now time.Time) (User, error) {
	tenantID = CanonicalID(tenantID)
	if tenantID != "" && !IsUUID(tenantID) {
		return User{}, fault.InvalidField("tenantId", "must be a UUID")
	}
	if profile.Email == nil {
		return User{}, fault.InvalidField("email", "is required")
	}
	now = now.UTC()
	u := User{ID: uuid.NewString(), AppID: appID, TenantID: tenantID, CreatedAt: now, UpdatedAt: now}
	if _, err := u.ApplyPatch(profile, now); err != nil {
		return User{}, err
	}
	u.EmailVerified = emailVerified
	return u, nil
}

// SetFrozen freezes or unfreezes the user. changed is false when the user already was in that state
// (the route is idempotent and such a call emits no event). Deleted users cannot be changed.
func (u *User) SetFrozen(frozen bool, now time.Time) (changed bool, err error) {
	if u.Deleted {
		return false, NotFound("user")
	}
	if u.Frozen == frozen {
		return false, nil
	}
	u.Frozen = frozen
	u.UpdatedAt = now.UTC()
	return true, nil
}

// ErrUserInactive is returned when a frozen or deleted user tries to sign in or use a token.
var ErrUserInactive = fault.Forbidden("user is frozen or deleted")

// CheckActive refuses frozen and deleted users: they may neither sign in nor hold working tokens.
func (u User) CheckActive() error {
	if u.Frozen || u.Deleted {
		return ErrUserInactive
	}
	return nil
}

// ChangePassword replaces the password hash of a user who proved the current password. Frozen and
// deleted users cannot change it: their tokens no longer work, and a change would be a way back in.
func (u *User) ChangePassword(hash string, now time.Time) error {
	if err := u.CheckActive(); err != nil {
		return err
	}
	u.PasswordHash, u.UpdatedAt = hash, now.UTC()
	return nil
}

// RecordSignIn notes a successful sign-in (route 8 lists them; tenant reads show the flags).
func (u *User) RecordSignIn(at time.Time, ip string) error {
	if err := u.CheckActive(); err != nil {
		return err
	}
	at = at.UTC()
	u.LastSignInAt, u.LastSignInIP, u.UpdatedAt = &at, ip, at
	return nil
}

// ResetPassword replaces the password hash after the user proved control of the address by a
// reset mail; the same proof verifies the address. It reports whether the address was unverified
// before. Frozen and deleted users cannot reset: a reset would hand them a working sign-in.
func (u *User) ResetPassword(hash string, now time.Time) (verifiedNow bool, err error) {
	if err := u.CheckActive(); err != nil {
		return false, err
	}
	verifiedNow = !u.EmailVerified
	u.PasswordHash, u.EmailVerified, u.UpdatedAt = hash, true, now.UTC()
	return verifiedNow, nil
}

// MarkDeleted soft-deletes the user: the row stays for the tenant's records and analytics, but
// the user can no longer sign in, and the email address becomes free for a new account. Deleting
// twice is "not found", as for any other missing user.
func (u *User) MarkDeleted(now time.Time) error {
	if u.Deleted {
		return NotFound("user")
	}
	u.Deleted, u.UpdatedAt = true, now.UTC()
	return nil
}

// ConfirmEmail makes email, which the user just proved to read (an email-change confirmation), the
// user's verified address. It returns the contract names of the fields that changed.
func (u *User) ConfirmEmail(email string, now time.Time) (changed []string) {
	if u.Email != email {
		u.Email = email
		changed = append(changed, "email")
	}
	if !u.EmailVerified {
		u.EmailVerified = true
		changed = append(changed, "email_verified")
	}
	if len(changed) > 0 {
		u.UpdatedAt = now.UTC()
	}
	return changed
}

// ApplyPatch validates every set field of p and applies the ones that differ from the user's current
// values. It returns the contract names of the fields that changed, in patch field order; on a
// validation error nothing is applied. Deleted users cannot be changed.
func (u *User) ApplyPatch(p UserPatch, now time.Time) (changed []string, err error) {
	if u.Deleted {
		return nil, NotFound("user")
	}
	norm, err := p.normalize()
	if err != nil {
		return nil, err
	}
	now = now.UTC()
	for _, f := range stringFields {
		v := *f.patch(&norm)
		if v == nil {
			continue
		}
		cur := f.user(u)
		if f.name == "email" {
			// Email addresses compare case-insensitively: a change of case alone is no change and must
			// not cost the user their verified status.
			if strings.EqualFold(*cur, *v) {
				continue
			}
			u.EmailVerified = false
		} else if *cur == *v {
			continue
		}
		*cur = *v
		changed = append(changed, f.name)
	}
	if n := norm.AcceptedNewsletter; n != nil && *n != u.AcceptedNewsletter {
		u.AcceptedNewsletter = *n
		// The date records the current consent, so it is set on opt-in and cleared on opt-out.
		u.AcceptedNewsletterDate = ""
		if *n {
			u.AcceptedNewsletterDate = now.Format(time.RFC3339)
		}
		changed = append(changed, "acceptedNewsletter", "acceptedNewsletterDate")
	}
	if len(changed) > 0 {
		u.UpdatedAt = now
	}
	return changed, nil
}

// CanonicalID returns s in lower case when it is a UUID, so that an id matches in every store
// whatever case the caller wrote it in (PostgreSQL's uuid type ignores case, Go strings do not).
// Anything else is returned unchanged and fails the lookups it is used in.
func CanonicalID(s string) string {
	if IsUUID(s) {
		return strings.ToLower(s)
	}
	return s
}

// IsUUID reports whether s is a UUID in its canonical 36-character form (uuid.Parse alone also
// accepts braces, URNs and hex without dashes, which are not ids this service issues).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}
