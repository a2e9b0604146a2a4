package config

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestReadersFallBackToDefaultsAndRejectGarbage(t *testing.T) {
	t.Setenv("BERTH_T_INT", "42")
	t.Setenv("BERTH_T_BADINT", "forty")
	t.Setenv("BERTH_T_DUR", "1500ms")
	t.Setenv("BERTH_T_BLANK", "   ")
	if n, err := Int("BERTH_T_INT", 1); err != nil || n != 42 {
		t.Fatalf("Int = %d, %v", n, err)
	}
	if _, err := Int("BERTH_T_BADINT", 1); err == nil {
		t.Fatal("Int accepted a non-number")
	}
	if n, _ := Int("BERTH_T_UNSET", 7); n != 7 {
		t.Fatalf("Int default = %d", n)
	}
	if d, err := Duration("BERTH_T_DUR", 0); err != nil || d != 1500*time.Millisecond {
		t.Fatalf("Duration = %v, %v", d, err)
	}
	if s := String("BERTH_T_BLANK", "def"); s != "def" {
		t.Fatalf("blank value not treated as unset: %q", s)
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
