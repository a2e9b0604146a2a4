package config

import (
	"bytes"
	"strings"
	"testing"
)

func TestStringTreatsBlankAsUnset(t *testing.T) {
	t.Setenv("BERTH_T_SET", " value ")
	t.Setenv("BERTH_T_BLANK", "   ")
	if s := String("BERTH_T_SET", "def"); s != "value" {
		t.Fatalf("String = %q, want the trimmed value", s)
	}
	if s := String("BERTH_T_BLANK", "def"); s != "def" {
		t.Fatalf("blank value not treated as unset: %q", s)
	}
}

func TestOverlayFillsOnlyWhatTheEnvironmentLeavesUnset(t *testing.T) {
	base := Env(func(name string) string { return map[string]string{"SET": "from-env", "BLANK": " "}[name] })
	env := Overlay(base, map[string]string{"SET": "overlay", "BLANK": "overlay", "UNSET": "overlay"})
	for name, want := range map[string]string{"SET": "from-env", "BLANK": "overlay", "UNSET": "overlay", "NEITHER": ""} {
		if got := env.String(name, ""); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
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
