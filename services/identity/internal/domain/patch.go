package domain

import (
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/locale"
	"net/mail"
	"regexp"
	"strings"
	"time"
)

// UserPatch holds the user fields route 18 may change; nil fields stay as they are.
type UserPatch struct {
	Language, Salutation, SalutationOther                                *string
	Name, GivenName, FamilyName, MiddleName, Nickname, PreferredUsername *string
	Profile, Picture, Website, Email, Gender, OtherGender                *string
	Birthdate, Zoneinfo, Locale, PhoneNumber                             *string
	AcceptedNewsletter                                                   *bool
}

// stringField binds one patchable text field to its user field and its rule. One table drives
// validation and application, so a new field cannot be validated but forgotten (or the reverse).
type stringField struct {
	name  string // the contract's JSON name
	patch func(*UserPatch) **string
	user  func(*User) *string
	// check validates and normalises a value.
	check func(field, v string) (string, error)
}

var stringFields = []stringField{
	{"language", func(p *UserPatch) **string { return &p.Language }, func(u *User) *string { return &u.Language }, checkLanguage},
	{"salutation", func(p *UserPatch) **string { return &p.Salutation }, func(u *User) *string { return &u.Salutation }, plainText},
	{"salutationOther", func(p *UserPatch) **string { return &p.SalutationOther }, func(u *User) *string { return &u.SalutationOther }, plainText},
	{"name", func(p *UserPatch) **string { return &p.Name }, func(u *User) *string { return &u.Name }, nameText},
	{"given_name", func(p *UserPatch) **string { return &p.GivenName }, func(u *User) *string { return &u.GivenName }, nameText},
	{"family_name", func(p *UserPatch) **string { return &p.FamilyName }, func(u *User) *string { return &u.FamilyName }, nameText},
	{"middle_name", func(p *UserPatch) **string { return &p.MiddleName }, func(u *User) *string { return &u.MiddleName }, nameText},
	{"nickname", func(p *UserPatch) **string { return &p.Nickname }, func(u *User) *string { return &u.Nickname }, nameText},
	{"preferred_username", func(p *UserPatch) **string { return &p.PreferredUsername }, func(u *User) *string { return &u.PreferredUsername }, nameText},
	{"profile", func(p *UserPatch) **string { return &p.Profile }, func(u *User) *string { return &u.Profile }, checkOptionalURL},
	{"picture", func(p *UserPatch) **string { return &p.Picture }, func(u *User) *string { return &u.Picture }, checkOptionalURL},
	{"website", func(p *UserPatch) **string { return &p.Website }, func(u *User) *string { return &u.Website }, checkOptionalURL},
	{"email", func(p *UserPatch) **string { return &p.Email }, func(u *User) *string { return &u.Email }, checkEmail},
	{"gender", func(p *UserPatch) **string { return &p.Gender }, func(u *User) *string { return &u.Gender }, plainText},
	{"other_gender", func(p *UserPatch) **string { return &p.OtherGender }, func(u *User) *string { return &u.OtherGender }, plainText},
	{"birthdate", func(p *UserPatch) **string { return &p.Birthdate }, func(u *User) *string { return &u.Birthdate }, checkBirthdate},
	{"zoneinfo", func(p *UserPatch) **string { return &p.Zoneinfo }, func(u *User) *string { return &u.Zoneinfo }, pattern(zoneinfoRE, 64, "must be a time zone name such as Europe/Berlin")},
	{"locale", func(p *UserPatch) **string { return &p.Locale }, func(u *User) *string { return &u.Locale }, pattern(localeRE, 35, "must be a locale such as en-US")},
	{"phone_number", func(p *UserPatch) **string { return &p.PhoneNumber }, func(u *User) *string { return &u.PhoneNumber }, checkPhone},
}

// normalize returns a copy of p with every set field validated and normalised, or the first
// invalid field's error (in contract field order, so the answer is deterministic).
func (p UserPatch) normalize() (UserPatch, error) {
	out := p
	for _, f := range stringFields {
		v := *f.patch(&out)
		if v == nil {
			continue
		}
		if err := checkText(f.name, *v, maxText); err != nil {
			return UserPatch{}, err
		}
		n, err := f.check(f.name, *v)
		if err != nil {
			return UserPatch{}, err
		}
		*f.patch(&out) = &n
	}
	return out, nil
}

func plainText(_, v string) (string, error) { return v, nil } // checkText already ran

func nameText(field, v string) (string, error) { return v, checkText(field, v, maxNameText) }

// maxEmail is the longest address SMTP can deliver to (RFC 5321 path limit).
const maxEmail = 254

// checkEmail accepts a bare address (no display name), at most 254 characters. The address is
// required: users sign in with it.
func checkEmail(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", fault.InvalidField(field, "is required")
	}
	if len(v) > maxEmail {
		return "", fault.InvalidField(field, "must be at most %d characters", maxEmail)
	}
	a, err := mail.ParseAddress(v)
	if err != nil || a.Address != v || a.Name != "" {
		return "", fault.InvalidField(field, "must be a valid email address")
	}
	return v, nil
}

// IsEmail reports whether s is a bare email address as accepted for users.
func IsEmail(s string) bool {
	_, err := checkEmail("email", s)
	return err == nil
}

// checkLanguage applies the one language rule (package pkg/locale); an empty value clears the
// field, like every optional profile field of the patch.
func checkLanguage(field, v string) (string, error) {
	if strings.TrimSpace(v) == "" {
		return "", nil
	}
	return locale.Check(field, v)
}

// Birthdates are stored as YYYY-MM-DD; clients may send a full ISO 8601 date-time (the REST wrapper
// sends a JavaScript Date's toISOString). The calendar date as written is kept: converting a local
// midnight to UTC would move the birthday to the previous day.
var birthdateLayouts = []string{time.DateOnly, time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999Z0700"}

func checkBirthdate(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	for _, layout := range birthdateLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t.Format(time.DateOnly), nil
		}
	}
	return "", fault.InvalidField(field, "must be a date (YYYY-MM-DD) or an ISO 8601 date-time")
}

func checkOptionalURL(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	if err := checkAbsoluteURL(v); err != nil {
		return "", fault.InvalidField(field, "%s", err.Error())
	}
	return v, nil
}

var (
	zoneinfoRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,3}$`)
	localeRE   = regexp.MustCompile(`^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8}){0,3}$`)
	phoneRE    = regexp.MustCompile(`^\+?[0-9 ()-]{3,31}$`)
)

// pattern builds a check for an optional value that must match re and stay within limit.
func pattern(re *regexp.Regexp, limit int, reason string) func(field, v string) (string, error) {
	return func(field, v string) (string, error) {
		v = strings.TrimSpace(v)
		if v != "" && (len(v) > limit || !re.MatchString(v)) {
			return "", fault.InvalidField(field, "%s", reason)
		}
		return v, nil
	}
}

// minPhoneDigits rejects strings of separators that happen to match the character set.
const minPhoneDigits = 3

func checkPhone(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	digits := 0
	for _, r := range v {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	if !phoneRE.MatchString(v) || digits < minPhoneDigits {
		return "", fault.InvalidField(field, "must be a phone number (digits, spaces, dashes, parentheses, optional leading +)")
	}
	return v, nil
}
