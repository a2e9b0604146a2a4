package keyset_test

import (
	"encoding/base64"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/keyset"
)

func TestNewestCursorRoundTripsToTheMicrosecondAndRefusesWhatEncodeCannotMake(t *testing.T) {
	const id = "0b0c3f4e-1a2b-4c5d-8e9f-0a1b2c3d4e5f"
	k := keyset.NewestOf(time.Date(2026, 11, 27, 16, 2, 41, 318204999, time.FixedZone("CET", 3600)), id)
	got, err := keyset.DecodeNewest("before", k.Encode())
	if err != nil || got == nil || !got.At.Equal(k.At) || got.ID != id || got.At.Nanosecond() != 318204000 {
		t.Fatalf("DecodeNewest(Encode(%+v)) = %+v, %v", k, got, err)
	}
	if got, err := keyset.DecodeNewest("before", ""); got != nil || err != nil {
		t.Errorf(`DecodeNewest("") = %+v, %v; want the newest row`, got, err)
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for name, c := range map[string]string{
		"not base64":       "%%%",
		"no separator":     enc("1764259361318204"),
		"no id":            enc("1764259361318204\x00"),
		"upper-case id":    enc("1764259361318204\x000B0C3F4E-1A2B-4C5D-8E9F-0A1B2C3D4E5F"),
		"time not digits":  enc("12ab\x00" + id),
		"time with a plus": enc("+1764259361318204\x00" + id),
		"leading zero":     enc("01764259361318204\x00" + id),
		"a search cursor":  keyset.Key{Text: "ann@example.com", ID: id}.Encode(),
		"too long":         enc(string(make([]byte, 5000))),
	} {
		if _, err := keyset.DecodeNewest("before", c); !fault.Is(err, fault.KindInvalid) || !namesField(err, "before") {
			t.Errorf("%s: DecodeNewest = %v, want InvalidArgument naming before", name, err)
		}
	}
}

func TestNewestOrdersByTimeThenIDDescending(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	rows := []keyset.Newest{
		keyset.NewestOf(at, "00000000-0000-4000-8000-000000000002"),
		keyset.NewestOf(at.Add(-time.Microsecond), "ffffffff-0000-4000-8000-000000000000"),
		keyset.NewestOf(at, "00000000-0000-4000-8000-000000000001"),
		keyset.NewestOf(at.Add(time.Second), "00000000-0000-4000-8000-000000000000"),
	}
	slices.SortFunc(rows, func(a, b keyset.Newest) int {
		switch {
		case b.Older(a):
			return -1
		case a.Older(b):
			return 1
		}
		return 0
	})
	want := []string{"00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000002",
		"00000000-0000-4000-8000-000000000001", "ffffffff-0000-4000-8000-000000000000"}
	for i, r := range rows {
		if r.ID != want[i] {
			t.Fatalf("newest first = %v, want ids %v", rows, want)
		}
	}
	if rows[1].Older(rows[1]) {
		t.Error("a position is older than itself")
	}
}

// namesField reports whether err is a fault naming field.
func namesField(err error, field string) bool {
	f, ok := fault.As(err)
	return ok && f.Field() == field
}
