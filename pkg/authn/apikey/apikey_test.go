package apikey

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestGeneratedKeyParsesBackToItsParts(t *testing.T) {
	id, secret, full, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	gotID, gotSecret, ok := Parse(full)
	if !ok || gotID != id || gotSecret != secret {
		t.Fatalf("Parse(%q) = %q, %q, %v", full, gotID, gotSecret, ok)
	}
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		t.Fatalf("key id %q is not a canonical UUID (it is the API key item's uuid)", id)
	}
}

func TestParseRejectsMalformedKeys(t *testing.T) {
	_, _, full, _ := Generate()
	cases := map[string]string{
		"empty":             "",
		"no prefix":         strings.TrimPrefix(full, prefix),
		"other prefix":      "other_" + strings.TrimPrefix(full, prefix),
		"truncated secret":  full[:len(full)-1],
		"upper-case hex":    strings.ToUpper(full[:6]) + strings.ToUpper(full[6:]),
		"missing separator": strings.Replace(full, "_", "", 2),
		"non-hex secret":    full[:len(full)-1] + "g",
	}
	for name, key := range cases {
		t.Run(name, func(t *testing.T) {
			if _, _, ok := Parse(key); ok {
				t.Fatalf("Parse(%q) accepted a malformed key", key)
			}
		})
	}
}

func TestMatchesOnlyTheRightSecretUnderTheRightPepper(t *testing.T) {
	pepper := []byte("pepper-one")
	stored := Hash(pepper, "secret")
	if !Matches(pepper, "secret", stored) {
		t.Fatal("the right secret did not match")
	}
	if Matches(pepper, "secreT", stored) {
		t.Fatal("a wrong secret matched")
	}
	if Matches([]byte("pepper-two"), "secret", stored) {
		t.Fatal("a hash made under another pepper matched")
	}
}
