package domain

import (
	"errors"
	"github.com/berthhq/berth/pkg/fault"
	"slices"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func baseUser() User {
	return User{ID: "11111111-1111-4111-8111-111111111111", AppID: "a", Email: "ada@example.test", EmailVerified: true}
}

func TestApplyPatchRejectsEachInvalidFieldByName(t *testing.T) {
	long := strings.Repeat("x", 257)
	cases := []struct {
		name  string
		patch UserPatch
		field string
	}{
		{"text over 256", UserPatch{Salutation: ptr(long)}, "salutation"},
		{"name over 128", UserPatch{GivenName: ptr(strings.Repeat("é", 129))}, "given_name"},
		{"control character", UserPatch{Nickname: ptr("a\nb")}, "nickname"},
		{"invalid UTF-8", UserPatch{Gender: ptr("\xff")}, "gender"},
		{"email without at", UserPatch{Email: ptr("not-an-email")}, "email"},
		{"email with display name", UserPatch{Email: ptr("Ada <ada@example.test>")}, "email"},
		{"empty email", UserPatch{Email: ptr("")}, "email"},
		{"email over 254", UserPatch{Email: ptr(strings.Repeat("a", 250) + "@x.test")}, "email"},
		{"language with digits", UserPatch{Language: ptr("12")}, "language"},
		{"language too long", UserPatch{Language: ptr("abcdefghi")}, "language"},
		{"language with a region", UserPatch{Language: ptr("de-AT")}, "language"},
		{"birthdate not a date", UserPatch{Birthdate: ptr("yesterday")}, "birthdate"},
		{"birthdate impossible day", UserPatch{Birthdate: ptr("2001-02-30")}, "birthdate"},
		{"profile relative URL", UserPatch{Profile: ptr("/me")}, "profile"},
		{"picture ftp URL", UserPatch{Picture: ptr("ftp://x.test/a.png")}, "picture"},
		{"website without host", UserPatch{Website: ptr("https://")}, "website"},
		{"phone with letters", UserPatch{PhoneNumber: ptr("call me")}, "phone_number"},
		{"phone too short", UserPatch{PhoneNumber: ptr("12")}, "phone_number"},
		{"phone plus inside", UserPatch{PhoneNumber: ptr("12+34")}, "phone_number"},
		{"phone only separators", UserPatch{PhoneNumber: ptr("(-) -")}, "phone_number"},
		{"locale", UserPatch{Locale: ptr("en US")}, "locale"},
		{"zoneinfo", UserPatch{Zoneinfo: ptr("Europe//Berlin")}, "zoneinfo"},
		{"first invalid field in contract order wins", UserPatch{Email: ptr("x"), Language: ptr("1")}, "language"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := baseUser()
			before := u
			_, err := u.ApplyPatch(c.patch, now)
			if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != c.field {
				t.Fatalf("error = %v, want a validation error on %q", err, c.field)
			}
			if u != before {
				t.Errorf("user changed by a rejected patch: %+v", u)
			}
		})
	}
}

func TestApplyPatchNormalisesValues(t *testing.T) {
	cases := []struct {
		name  string
		patch UserPatch
		get   func(User) string
		want  string
	}{
		{"language upper case is stored lower case", UserPatch{Language: ptr("DE")}, func(u User) string { return u.Language }, "de"},
		{"a German-speaking country code is German", UserPatch{Language: ptr("AT")}, func(u User) string { return u.Language }, "de"},
		{"any other country code is English", UserPatch{Language: ptr("fr")}, func(u User) string { return u.Language }, "en"},
		{"birthdate date only", UserPatch{Birthdate: ptr("1990-05-01")}, func(u User) string { return u.Birthdate }, "1990-05-01"},
		{"birthdate ISO date-time UTC", UserPatch{Birthdate: ptr("1990-05-01T00:00:00.000Z")}, func(u User) string { return u.Birthdate }, "1990-05-01"},
		{"birthdate keeps the written date with an offset", UserPatch{Birthdate: ptr("1990-05-01T00:00:00+02:00")}, func(u User) string { return u.Birthdate }, "1990-05-01"},
		{"birthdate date-time without zone", UserPatch{Birthdate: ptr("1990-05-01T12:30:00")}, func(u User) string { return u.Birthdate }, "1990-05-01"},
		{"birthdate empty clears", UserPatch{Birthdate: ptr("")}, func(u User) string { return u.Birthdate }, ""},
		{"email is trimmed", UserPatch{Email: ptr("  new@example.test ")}, func(u User) string { return u.Email }, "new@example.test"},
		{"website absolute https", UserPatch{Website: ptr("https://ada.test/x")}, func(u User) string { return u.Website }, "https://ada.test/x"},
		{"phone with separators", UserPatch{PhoneNumber: ptr("+49 (30) 123-456")}, func(u User) string { return u.PhoneNumber }, "+49 (30) 123-456"},
		{"zoneinfo", UserPatch{Zoneinfo: ptr("America/Argentina/Buenos_Aires")}, func(u User) string { return u.Zoneinfo }, "America/Argentina/Buenos_Aires"},
		{"locale", UserPatch{Locale: ptr("de_DE")}, func(u User) string { return u.Locale }, "de_DE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := baseUser()
			u.Birthdate = "2000-01-01"
			if _, err := u.ApplyPatch(c.patch, now); err != nil {
				t.Fatal(err)
			}
			if got := c.get(u); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestApplyPatchReportsOnlyFieldsThatChanged(t *testing.T) {
	cases := []struct {
		name         string
		patch        UserPatch
		wantChanged  []string
		wantVerified bool
	}{
		{"empty patch", UserPatch{}, nil, true},
		{"same values", UserPatch{Email: ptr("ada@example.test"), Language: ptr("EN")}, nil, true},
		{"email differing only in case keeps verification", UserPatch{Email: ptr("ADA@example.test")}, nil, true},
		{"new email resets verification", UserPatch{Email: ptr("other@example.test")}, []string{"email"}, false},
		{"several fields", UserPatch{Name: ptr("Ada"), Language: ptr("de")}, []string{"language", "name"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := baseUser()
			u.Language = "en"
			changed, err := u.ApplyPatch(c.patch, now)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(changed, c.wantChanged) {
				t.Errorf("changed = %v, want %v", changed, c.wantChanged)
			}
			if u.EmailVerified != c.wantVerified {
				t.Errorf("email_verified = %t, want %t", u.EmailVerified, c.wantVerified)
			}
			if wantUpdated := len(c.wantChanged) > 0; u.UpdatedAt.Equal(now) != wantUpdated {
				t.Errorf("UpdatedAt = %v, want updated: %t", u.UpdatedAt, wantUpdated)
			}
		})
	}
}

func TestNewsletterConsentDateFollowsTheFlag(t *testing.T) {
	cases := []struct {
		name     string
		accepted bool
		date     string
		set      bool
		wantDate string
		changed  bool
	}{
		{"opt-in sets the date from the clock", false, "", true, now.Format(time.RFC3339), true},
		{"opt-out clears the date", true, "2020-01-01T00:00:00Z", false, "", true},
		{"repeating consent keeps the first date", true, "2020-01-01T00:00:00Z", true, "2020-01-01T00:00:00Z", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := baseUser()
			u.AcceptedNewsletter, u.AcceptedNewsletterDate = c.accepted, c.date
			changed, err := u.ApplyPatch(UserPatch{AcceptedNewsletter: ptr(c.set)}, now)
			if err != nil {
				t.Fatal(err)
			}
			if u.AcceptedNewsletter != c.set || u.AcceptedNewsletterDate != c.wantDate {
				t.Errorf("got (%t, %q), want (%t, %q)", u.AcceptedNewsletter, u.AcceptedNewsletterDate, c.set, c.wantDate)
			}
			if (len(changed) > 0) != c.changed {
				t.Errorf("changed = %v, want a change: %t", changed, c.changed)
			}
		})
	}
}

func TestSetFrozenTransitions(t *testing.T) {
	cases := []struct {
		name        string
		frozen      bool
		deleted     bool
		set         bool
		wantChanged bool
		wantErr     error
	}{
		{"freeze an active user", false, false, true, true, nil},
		{"freeze a frozen user is a no-op", true, false, true, false, nil},
		{"unfreeze a frozen user", true, false, false, true, nil},
		{"unfreeze an active user is a no-op", false, false, false, false, nil},
		{"a deleted user cannot be frozen", false, true, true, false, ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := baseUser()
			u.Frozen, u.Deleted = c.frozen, c.deleted
			changed, err := u.SetFrozen(c.set, now)
			if !errors.Is(err, c.wantErr) || changed != c.wantChanged {
				t.Fatalf("SetFrozen = %t, %v; want %t, %v", changed, err, c.wantChanged, c.wantErr)
			}
			if c.wantErr == nil && u.Frozen != c.set {
				t.Errorf("Frozen = %t, want %t", u.Frozen, c.set)
			}
		})
	}
}

func TestDeletedUsersCannotBePatched(t *testing.T) {
	u := baseUser()
	u.Deleted = true
	if _, err := u.ApplyPatch(UserPatch{Name: ptr("x")}, now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("error = %v, want not found", err)
	}
}

func TestNewUserRequiresEmailAndUUIDTenant(t *testing.T) {
	cases := []struct {
		name, tenant string
		email        *string
		field        string
	}{
		{"missing email", "", nil, "email"},
		{"tenant not a UUID", "t-1", ptr("a@example.test"), "tenantId"},
		{"valid without tenant", "", ptr("a@example.test"), ""},
		{"valid with tenant", "22222222-2222-4222-8222-222222222222", ptr("a@example.test"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := NewUser("app", c.tenant, UserPatch{Email: c.email, Language: ptr("CH")}, true, now)
			if c.field != "" {
				if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != c.field {
					t.Fatalf("error = %v, want a validation error on %q", err, c.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !IsUUID(u.ID) || u.TenantID != c.tenant || u.Language != "de" || !u.EmailVerified || !u.CreatedAt.Equal(now) {
				t.Errorf("unexpected user %+v", u)
			}
		})
	}
}

func TestIsUUIDAcceptsOnlyTheCanonicalForm(t *testing.T) {
	cases := map[string]bool{
		"22222222-2222-4222-8222-222222222222":          true,
		"22222222222242228222222222222222":              false,
		"{22222222-2222-4222-8222-222222222222}":        false,
		"urn:uuid:22222222-2222-4222-8222-222222222222": false,
		"ada@example.test":                              false,
		"":                                              false,
	}
	for in, want := range cases {
		if got := IsUUID(in); got != want {
			t.Errorf("IsUUID(%q) = %t, want %t", in, got, want)
		}
	}
}
