package config

import (
	"bytes"
	"strings"
	"testing"
)

func TestStringTreatsBlankAsUnset(t *testing.T) {
	t.Setenv("BERTH_T_BLANK", "   ")
	t.Setenv("BERTH_T_SET", " value ")
	if s := String("BERTH_T_BLANK", "def"); s != "def" {
		t.Fatalf("blank value not treated as unset: %q", s)
	}
	if s := String("BERTH_T_SET", "def"); s != "value" {
		t.Fatalf("String = %q, want the trimmed value", s)
	}
}

func TestBytesDecodesHexAndBase64WithoutLeakingTheValue(t *testing.T) {
	want := []byte{0xde, 0xad, 0xbe, 0xef}
	for _, v := range []string{"deadbeef", "3q2+7w==", "3q2-7w"} {
		t.Setenv("BERTH_T_SECRET", v)
		got, err := Bytes("BERTH_T_SECRET")
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Bytes(%q) = %x, %v", v, got, err)
		}
	}
	t.Setenv("BERTH_T_SECRET", "not*a*secret")
	_, err := Bytes("BERTH_T_SECRET")
	if err == nil || strings.Contains(err.Error(), "not*a*secret") {
		t.Fatalf("bad secret error = %v", err)
	}
}
