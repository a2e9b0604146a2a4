package password

import (
	"errors"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/fault"
)

// cheap keeps the tests fast under -race; the PHC string carries the parameters either way.
var cheap = Params{MemoryKiB: 64, Time: 1, Threads: 1}

func TestCheckRefusesEachRuleAndNamesIt(t *testing.T) {
	const email = "Ada.Lovelace@example.test"
	cases := []struct {
		name   string
		pw     string
		email  string
		reason string // "" = accepted
	}{
		{"eight ASCII characters", "vq7#mzt2", email, ""},
		{"seven characters", "vq7#mzt", email, ReasonLength},
		{"eight multi-byte runes count as eight", strings.Repeat("ä", 8), email, ""},
		{"seven multi-byte runes are too short even with 14 bytes", strings.Repeat("ä", 7), email, ReasonLength},
		{"128 runes", strings.Repeat("x", 127) + "y", email, ""},
		{"129 runes", strings.Repeat("x", 129), email, ReasonLength},
		{"empty", "", email, ReasonLength},
		{"invalid UTF-8", "vq7#mzt2\xff", email, ReasonCharacters},
		{"only whitespace", strings.Repeat(" \t", 6), email, ReasonBlank},
		{"spaces around are kept and allowed", "  pass phrase  ", email, ""},
		{"a common password", "password1", email, ReasonCommon},
		{"a common password in other case", "PassWord1", email, ReasonCommon},
		{"a common password with spaces around", "  iloveyou ", email, ReasonCommon},
		{"a breached keyboard walk", "qwertyuiop", email, ReasonCommon},
		{"a common password inside a longer phrase is fine", "password1 on a boat", email, ""},
		{"the local part", "ada.lovelace!!", email, ReasonEmail},
		{"the local part in other case", "xxADA.LOVELACExx", email, ReasonEmail},
		{"the name before a subaddress tag", "my bob-ross pass", "bob-ross+news@example.test", ReasonEmail},
		{"the whole subaddressed local part", "use bob+news twice", "bob+news@example.test", ReasonEmail},
		{"a two-character local part is exempt", "jo is my name", "jo@example.test", ""},
		{"a two-character name before a tag is exempt", "jo is my name", "jo+x@example.test", ""},
		{"the domain is not the local part", "example.test rocks", email, ""},
		{"no email (nothing to compare)", "ada.lovelace!!", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.pw, c.email)
			if c.reason == "" {
				if err != nil {
					t.Fatalf("Check(%q, %q) = %v, want accepted", c.pw, c.email, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check(%q, %q) accepted it, want the %s rule", c.pw, c.email, c.reason)
			}
			if !errors.Is(err, ErrPolicy) {
				t.Errorf("error %v does not match ErrPolicy", err)
			}
			f, ok := fault.As(err)
			if !ok || f.Kind() != fault.KindInvalid || f.Field() != "password" || f.Reason() != c.reason {
				t.Fatalf("error %v: want an Invalid fault on password with reason %q", err, c.reason)
			}
			if c.pw != "" && strings.Contains(f.Message(), c.pw) {
				t.Errorf("message %q repeats the password", f.Message())
			}
		})
	}
}

func TestTheCommonListHoldsOnlyPasswordsTheLengthRuleLetsThrough(t *testing.T) {
	set := common()
	if len(set) < 10000 {
		t.Fatalf("the common list has %d entries of %d characters or more, want the whole list (over 10,000)", len(set), MinLength)
	}
	for pw := range set {
		if len([]rune(pw)) < MinLength || strings.ToLower(pw) != pw {
			t.Fatalf("listed %q is shorter than %d or not lower case", pw, MinLength)
		}
	}
}

func TestHashVerifiesOnlyTheSamePassword(t *testing.T) {
	h, err := NewHasher(cheap)
	if err != nil {
		t.Fatal(err)
	}
	phc, err := h.Hash("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(phc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Errorf("hash %q is not a PHC argon2id string with the parameters", phc)
	}
	again, _ := h.Hash("correct horse battery")
	if again == phc {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	cases := []struct {
		name, phc, pw string
		want          bool
	}{
		{"same password", phc, "correct horse battery", true},
		{"other password", phc, "correct horse batterY", false},
		{"empty hash (no password set)", "", "correct horse battery", false},
		{"bcrypt hash", "$2a$10$abcdefghijklmnopqrstuv", "x", false},
		{"tampered hash", phc[:len(phc)-2] + "AA", "correct horse battery", false},
		{"absurd memory parameter", strings.Replace(phc, "m=64", "m=99999999", 1), "correct horse battery", false},
	}
	for _, c := range cases {
		if got := h.Verify(c.phc, c.pw); got != c.want {
			t.Errorf("%s: Verify = %t, want %t", c.name, got, c.want)
		}
	}
}

func TestHashesFromOtherParametersStillVerify(t *testing.T) {
	old, _ := NewHasher(cheap)
	phc, err := old.Hash("pass phrase one")
	if err != nil {
		t.Fatal(err)
	}
	stronger, err := NewHasher(Params{MemoryKiB: 128, Time: 2, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !stronger.Verify(phc, "pass phrase one") {
		t.Error("a hash made with older parameters no longer verifies")
	}
}

func TestNewHasherRejectsUnusableParameters(t *testing.T) {
	for _, p := range []Params{{MemoryKiB: 64, Time: 0, Threads: 1}, {MemoryKiB: 64, Time: 1, Threads: 0}, {MemoryKiB: 1 << 21, Time: 1, Threads: 1}} {
		if _, err := NewHasher(p); err == nil {
			t.Errorf("NewHasher(%+v): want error", p)
		}
	}
}
