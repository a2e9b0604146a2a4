package password

import (
	"errors"
	"strings"
	"testing"
)

// cheap keeps the tests fast under -race; the PHC string carries the parameters either way.
var cheap = Params{MemoryKiB: 64, Time: 1, Threads: 1}

func TestCheckPolicy(t *testing.T) {
	cases := []struct {
		name string
		pw   string
		ok   bool
	}{
		{"ten ASCII characters", "abcdefghij", true},
		{"nine characters", "abcdefghi", false},
		{"ten multi-byte runes count as ten", strings.Repeat("ä", 10), true},
		{"nine multi-byte runes are too short even with 18 bytes", strings.Repeat("ä", 9), false},
		{"128 runes", strings.Repeat("x", 128), true},
		{"129 runes", strings.Repeat("x", 129), false},
		{"only whitespace", strings.Repeat(" \t", 6), false},
		{"spaces around are kept and allowed", "  pass phrase  ", true},
		{"invalid UTF-8", "abcdefghij\xff", false},
		{"empty", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.pw)
			if (err == nil) != c.ok {
				t.Fatalf("Check(%q) = %v, want ok=%t", c.pw, err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrPolicy) {
				t.Errorf("error %v does not match ErrPolicy", err)
			}
		})
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
