package keyset_test

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/keyset"
)

func TestPageSizeDefaultsTo25AndRefusesOutsideOneToHundred(t *testing.T) {
	cases := []struct {
		in      int32
		want    int
		invalid bool
	}{
		{0, 25, false}, {1, 1, false}, {100, 100, false},
		{-1, 0, true}, {101, 0, true}, {1 << 30, 0, true},
	}
	for _, c := range cases {
		got, err := keyset.PageSize(c.in)
		if c.invalid {
			if !fault.Is(err, fault.KindInvalid) {
				t.Errorf("PageSize(%d): err = %v, want InvalidArgument", c.in, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("PageSize(%d) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestParseQueryTellsIDsFromLowerCasedPrefixes(t *testing.T) {
	const id = "0B0C3F4E-1A2B-4C5D-8E9F-0A1B2C3D4E5F"
	cases := []struct {
		in   string
		want keyset.Query
	}{
		{"", keyset.Query{}},
		{"  Ann@Example ", keyset.Query{Prefix: "ann@example"}},
		{id, keyset.Query{ID: strings.ToLower(id)}},
		{" " + id + " ", keyset.Query{ID: strings.ToLower(id)}},
		{id[:35], keyset.Query{Prefix: strings.ToLower(id[:35])}},
		{"100%_done", keyset.Query{Prefix: "100%_done"}},
	}
	for _, c := range cases {
		got, err := keyset.ParseQuery(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseQuery(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestParseQueryRefusesBadText(t *testing.T) {
	for name, q := range map[string]string{
		"invalid UTF-8": "a\xffb", "NUL": "a\x00b", "control": "a\x1bb", "too long": strings.Repeat("a", 255),
	} {
		if _, err := keyset.ParseQuery(q); !fault.Is(err, fault.KindInvalid) {
			t.Errorf("%s: err = %v, want InvalidArgument", name, err)
		}
	}
}

func TestCursorRoundTripsAndRefusesWhatEncodeCannotMake(t *testing.T) {
	k := keyset.Key{Text: "änne@example.test", ID: "0b0c3f4e-1a2b-4c5d-8e9f-0a1b2c3d4e5f"}
	got, err := keyset.Decode(k.Encode())
	if err != nil || got == nil || *got != k {
		t.Fatalf("Decode(Encode(%+v)) = %+v, %v", k, got, err)
	}
	if got, err := keyset.Decode(""); got != nil || err != nil {
		t.Errorf("Decode(\"\") = %+v, %v; want the first page", got, err)
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for name, c := range map[string]string{
		"not base64":         "!!!",
		"padded base64":      base64.URLEncoding.EncodeToString([]byte("a\x000b0c3f4e-1a2b-4c5d-8e9f-0a1b2c3d4e5f")),
		"no separator":       enc("a0b0c3f4e-1a2b-4c5d-8e9f-0a1b2c3d4e5f"),
		"id not a UUID":      enc("a\x00nope"),
		"id upper-cased":     enc("a\x000B0C3F4E-1A2B-4C5D-8E9F-0A1B2C3D4E5F"),
		"text not UTF-8":     enc("a\xff\x000b0c3f4e-1a2b-4c5d-8e9f-0a1b2c3d4e5f"),
		"text with controls": enc("a\n\x000b0c3f4e-1a2b-4c5d-8e9f-0a1b2c3d4e5f"),
		"too long":           strings.Repeat("A", 5000),
	} {
		if _, err := keyset.Decode(c); !fault.Is(err, fault.KindInvalid) {
			t.Errorf("%s: err = %v, want InvalidArgument", name, err)
		}
	}
}

func TestKeyOrderIsTextThenID(t *testing.T) {
	a := keyset.Key{Text: "a", ID: "2"}
	if !a.Less(keyset.Key{Text: "b", ID: "1"}) || !a.Less(keyset.Key{Text: "a", ID: "3"}) || a.Less(a) {
		t.Error("Less must order by text, then id, strictly")
	}
}

func TestPageCutsTheExtraRowAndNamesTheLastShown(t *testing.T) {
	key := func(s string) keyset.Key { return keyset.Key{Text: s, ID: "0b0c3f4e-1a2b-4c5d-8e9f-0a1b2c3d4e5f"} }
	rows, next := keyset.Page([]string{"a", "b", "c"}, 2, key)
	if len(rows) != 2 || next != key("b").Encode() {
		t.Errorf("Page of 3 rows by 2 = %v, %q; want [a b] and b's cursor", rows, next)
	}
	rows, next = keyset.Page([]string{"a", "b"}, 2, key)
	if len(rows) != 2 || next != "" {
		t.Errorf("last page = %v, %q; want both rows and no cursor", rows, next)
	}
}

func TestParseSearchAsksOneRowMoreThanThePageShows(t *testing.T) {
	after := keyset.Key{Text: "b", ID: "0b0c3f4e-1a2b-4c5d-8e9f-0a1b2c3d4e5f"}
	s, size, err := keyset.ParseSearch(" B ", 10, after.Encode())
	if err != nil || size != 10 || s.Limit != 11 || s.Prefix != "b" || s.After == nil || *s.After != after {
		t.Fatalf("ParseSearch = %+v, %d, %v", s, size, err)
	}
	for name, call := range map[string]func() error{
		"bad query":  func() error { _, _, err := keyset.ParseSearch("\x00", 0, ""); return err },
		"bad size":   func() error { _, _, err := keyset.ParseSearch("", 101, ""); return err },
		"bad cursor": func() error { _, _, err := keyset.ParseSearch("", 0, "x"); return err },
	} {
		if err := call(); !fault.Is(err, fault.KindInvalid) {
			t.Errorf("%s: err = %v, want InvalidArgument", name, err)
		}
	}
}

func TestSelectMatchesPrefixOrIDAfterTheCursorInOrder(t *testing.T) {
	const (
		id1 = "00000000-0000-4000-8000-000000000001"
		id2 = "00000000-0000-4000-8000-000000000002"
		id3 = "00000000-0000-4000-8000-000000000003"
	)
	rows := []keyset.Key{{"bob@x", id1}, {"ann@x", id3}, {"ann@x", id2}, {"anna@y", id1}}
	self := func(k keyset.Key) keyset.Key { return k }
	cases := []struct {
		name string
		s    keyset.Search
		want []keyset.Key
	}{
		{"everything in order", keyset.Search{Limit: 10}, []keyset.Key{{"ann@x", id2}, {"ann@x", id3}, {"anna@y", id1}, {"bob@x", id1}}},
		{"prefix", keyset.Search{Query: keyset.Query{Prefix: "ann"}, Limit: 10}, []keyset.Key{{"ann@x", id2}, {"ann@x", id3}, {"anna@y", id1}}},
		{"limit", keyset.Search{Limit: 1}, []keyset.Key{{"ann@x", id2}}},
		{"after a tie", keyset.Search{After: &keyset.Key{"ann@x", id2}, Limit: 2}, []keyset.Key{{"ann@x", id3}, {"anna@y", id1}}},
		{"id", keyset.Search{Query: keyset.Query{ID: id1}, Limit: 10}, []keyset.Key{{"anna@y", id1}, {"bob@x", id1}}},
		{"wildcards are letters", keyset.Search{Query: keyset.Query{Prefix: "a%"}, Limit: 10}, nil},
	}
	for _, c := range cases {
		got := keyset.Select(rows, c.s, self)
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

func TestPrefixEndBoundsExactlyTheTextsWithThePrefix(t *testing.T) {
	cases := []struct {
		prefix, end string
		ok          bool
	}{
		{"", "", false},
		{"ann", "ano", true},
		{"a\u00ff", "a\u0100", true},
		{"a\ud7ff", "a\ue000", true},
		{"a\U0010ffff", "b", true},
		{"\U0010ffff\U0010ffff", "", false},
	}
	for _, c := range cases {
		end, ok := keyset.PrefixEnd(c.prefix)
		if end != c.end || ok != c.ok {
			t.Errorf("PrefixEnd(%q) = %q, %v; want %q, %v", c.prefix, end, ok, c.end, c.ok)
		}
	}
	for _, s := range []string{"ann", "ann@x", "ann\U0010ffff\U0010ffff"} {
		if end, _ := keyset.PrefixEnd("ann"); !(s < end) {
			t.Errorf("%q must sort below the end of prefix ann", s)
		}
	}
	for _, s := range []string{"ano", "anoa", "b"} {
		if end, _ := keyset.PrefixEnd("ann"); s < end {
			t.Errorf("%q must not sort below the end of prefix ann", s)
		}
	}
}

func TestSQLScansOneRangeOfTheIndex(t *testing.T) {
	after := &keyset.Key{Text: "ann@x", ID: "00000000-0000-4000-8000-000000000001"}
	const key = `lower(email) collate "C"`
	cases := []struct {
		name string
		s    keyset.Search
		sql  string
		args []any
	}{
		{"everything", keyset.Search{Limit: 26},
			` order by lower(email) collate "C", id limit $2`, []any{"app", 26}},
		{"prefix", keyset.Search{Query: keyset.Query{Prefix: "ann"}, Limit: 26},
			` and lower(email) collate "C" >= $2 collate "C" and lower(email) collate "C" < $3 collate "C" order by lower(email) collate "C", id limit $4`,
			[]any{"app", "ann", "ano", 26}},
		{"prefix after a cursor", keyset.Search{Query: keyset.Query{Prefix: "ann"}, After: after, Limit: 26},
			` and (lower(email) collate "C", id) > ($2 collate "C", $3::uuid) and lower(email) collate "C" < $4 collate "C" order by lower(email) collate "C", id limit $5`,
			[]any{"app", after.Text, after.ID, "ano", 26}},
		{"a cursor below the prefix", keyset.Search{Query: keyset.Query{Prefix: "bob"}, After: after, Limit: 26},
			` and lower(email) collate "C" >= $2 collate "C" and lower(email) collate "C" < $3 collate "C" order by lower(email) collate "C", id limit $4`,
			[]any{"app", "bob", "boc", 26}},
		{"id", keyset.Search{Query: keyset.Query{ID: after.ID}, Limit: 26},
			` and id = $2::uuid order by lower(email) collate "C", id limit $3`, []any{"app", after.ID, 26}},
	}
	for _, c := range cases {
		sql, args := c.s.SQL(key, []any{"app"})
		if sql != c.sql || !reflect.DeepEqual(args, c.args) {
			t.Errorf("%s:\n got %s %v\nwant %s %v", c.name, sql, args, c.sql, c.args)
		}
	}
}
