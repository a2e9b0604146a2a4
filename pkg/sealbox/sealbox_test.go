package sealbox

import (
	"bytes"
	"errors"
	"testing"
)

func key(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func TestNewRejectsKeysThatAreNotAES256(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33} {
		if _, err := New(make([]byte, n)); err == nil {
			t.Errorf("New with %d-byte key: want error", n)
		}
	}
}

func TestSealedSecretOpensOnlyWithSameKeyAndOwner(t *testing.T) {
	box, err := New(key(1))
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(key(2))
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte("private key bytes")
	sealed, err := box.Seal(plain, "app-1")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, plain) {
		t.Fatal("sealed value contains the plaintext")
	}
	got, err := box.Open(sealed, "app-1")
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v; want the plaintext", got, err)
	}
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	cases := []struct {
		name   string
		box    *Box
		sealed []byte
		owner  string
	}{
		{"other owner", box, sealed, "app-2"},
		{"other key", other, sealed, "app-1"},
		{"tampered", box, tampered, "app-1"},
		{"truncated", box, sealed[:5], "app-1"},
	}
	for _, c := range cases {
		if _, err := c.box.Open(c.sealed, c.owner); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: Open error = %v, want ErrOpen", c.name, err)
		}
	}
}

func TestSealUsesAFreshNonceEachTime(t *testing.T) {
	box, _ := New(key(1))
	a, _ := box.Seal([]byte("same"), "o")
	b, _ := box.Seal([]byte("same"), "o")
	if bytes.Equal(a, b) {
		t.Fatal("two seals of the same plaintext are identical")
	}
}
