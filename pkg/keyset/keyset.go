package keyset

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/text"
)

// DefaultPageSize is the page size of a request that names none; MaxPageSize the most a page holds.
const (
	DefaultPageSize = 25
	MaxPageSize     = 100
)

// maxCursor bounds an encoded cursor: base64 of a sort text (an email of at most 254 bytes, a
// tenant name of at most 256 characters, up to 4 bytes each) and an id, with room to spare.
const maxCursor = 4096

// MaxQuery bounds a query: the longest email address (RFC 5321), which is longer than any name a
// search looks for.
const MaxQuery = 254

// PageSize answers the page size of a request: 0 means DefaultPageSize, otherwise 1 to MaxPageSize.
func PageSize(n int32) (int, error) {
	switch {
	case n == 0:
		return DefaultPageSize, nil
	case n < 0 || n > MaxPageSize:
		return 0, fault.InvalidField("pageSize", "must be between 1 and %d", MaxPageSize)
	}
	return int(n), nil
}

// Query is a parsed search: ID for an exact id, else Prefix (lower-cased; "" matches every row).
type Query struct {
	ID     string
	Prefix string
}

// ParseQuery reads the query field: surrounding spaces dropped, one line of valid text, at most
// MaxQuery bytes. A UUID is an id (lower-cased, as ids are stored); anything else is a prefix,
// lower-cased, because the rows it matches are compared lower-cased.
func ParseQuery(q string) (Query, error) {
	q = strings.TrimSpace(q)
	if err := text.Check("query", q); err != nil {
		return Query{}, err
	}
	if len(q) > MaxQuery {
		return Query{}, fault.InvalidField("query", "must be at most %d characters", MaxQuery)
	}
	if IsID(q) {
		return Query{ID: strings.ToLower(q)}, nil
	}
	return Query{Prefix: strings.ToLower(q)}, nil
}

// IsID reports whether s is a UUID in its 36-character form, the only form Berth issues.
func IsID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// Key is a row's position in a search's order: its lower-cased sort text, then its id.
type Key struct {
	Text, ID string
}

// Less reports whether k sorts before o; it is the stores' order (bytes of the text, then the id).
func (k Key) Less(o Key) bool {
	if k.Text != o.Text {
		return k.Text < o.Text
	}
	return k.ID < o.ID
}

// Compare orders k and o as Less does (-1, 0 or 1), for slices.SortFunc.
func (k Key) Compare(o Key) int {
	switch {
	case k.Less(o):
		return -1
	case o.Less(k):
		return 1
	}
	return 0
}

// Encode is the opaque cursor of k.
func (k Key) Encode() string {
	return encodePair(k.Text, k.ID)
}

// errCursor answers every cursor this package did not make.
var errCursor = fault.InvalidField("after", "is not a cursor of this search")

// Decode reads a cursor made by Encode: nil for "" (the first page), InvalidArgument for anything
// Encode cannot have made.
func Decode(cursor string) (*Key, error) {
	if cursor == "" {
		return nil, nil
	}
	sortText, id, ok := decodePair(cursor)
	if !ok || !text.Valid(sortText) {
		return nil, errCursor
	}
	return &Key{Text: sortText, ID: id}, nil
}

// encodePair is the cursor of a position: its sort value, then its row's id.
func encodePair(value, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(value + "\x00" + id))
}

// decodePair reads a cursor made by encodePair; ok is false for anything it cannot have made
// (the id, in lower case, included). The value is the caller's to check.
func decodePair(cursor string) (value, id string, ok bool) {
	if len(cursor) > maxCursor {
		return "", "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", "", false
	}
	value, id, ok = strings.Cut(string(raw), "\x00")
	if !ok || !IsID(id) || id != strings.ToLower(id) {
		return "", "", false
	}
	return value, id, true
}

// Page cuts rows, fetched with one row more than size, to a page: the first size rows and the
// cursor after the last of them, or "" when the extra row is absent (this is the last page).
func Page[T any](rows []T, size int, key func(T) Key) ([]T, string) {
	if len(rows) <= size {
		return rows, ""
	}
	rows = rows[:size]
	return rows, key(rows[size-1]).Encode()
}

// Search is what a store's search is asked: the query, the position the page starts after (nil:
// the first row) and how many rows at most (one more than the page shows, so that Page can tell
// whether another page follows).
type Search struct {
	Query
	After *Key
	Limit int
}

// ParseSearch reads a search request's query, page size and cursor into the store's Search and the
// page size to cut its answer to (Page).
func ParseSearch(query string, pageSize int32, after string) (Search, int, error) {
	q, err := ParseQuery(query)
	if err != nil {
		return Search{}, 0, err
	}
	size, err := PageSize(pageSize)
	if err != nil {
		return Search{}, 0, err
	}
	k, err := Decode(after)
	if err != nil {
		return Search{}, 0, err
	}
	return Search{Query: q, After: k, Limit: size + 1}, size, nil
}

// Select answers s over rows held in memory, as the SQL stores answer it over an index: the rows
// whose id is s.ID, or whose key text starts with s.Prefix, after s.After, in key order, at most
// s.Limit. key gives a row's position (its text lower-cased).
func Select[T any](rows []T, s Search, key func(T) Key) []T {
	var out []T
	for _, r := range rows {
		k := key(r)
		switch {
		case s.ID != "" && k.ID != s.ID:
		case s.ID == "" && !strings.HasPrefix(k.Text, s.Prefix):
		case s.After != nil && !s.After.Less(k):
		default:
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b T) int { return key(a).Compare(key(b)) })
	if len(out) > s.Limit {
		out = out[:s.Limit]
	}
	return out
}

// PrefixEnd is the least text above every text that starts with prefix, in the byte order of
// UTF-8 (which is the code points' order): the prefix with its last code point raised by one,
// whatever followed dropped. ok is false when no text bounds them (prefix "" or only U+10FFFF).
// The SQL stores scan the range [prefix, end) of their index instead of matching a LIKE pattern,
// because a prepared statement's generic plan cannot turn a LIKE parameter into a range.
func PrefixEnd(prefix string) (end string, ok bool) {
	rs := []rune(prefix)
	for i := len(rs) - 1; i >= 0; i-- {
		switch r := rs[i]; r {
		case unicode.MaxRune:
			continue
		case 0xD7FF: // the surrogates are no code points of UTF-8 text
			rs[i] = 0xE000
		default:
			rs[i] = r + 1
		}
		return string(rs[:i+1]), true
	}
	return "", false
}

// SQL appends to a query's conditions (which use args so far) those of s over an index ordered by
// (key, id), and the order and limit; key is a text expression under the "C" collation, the
// index's, repeated exactly so that the planner matches it. The page is then one range scan of the
// index: the prefix's range [prefix, PrefixEnd(prefix)), started after the cursor when there is
// one, s.Limit entries at most.
func (s Search) SQL(key string, args []any) (string, []any) {
	var b strings.Builder
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if s.ID != "" {
		b.WriteString(" and id = " + arg(s.ID) + "::uuid")
	}
	// A cursor below the prefix's range (made by another search) starts at the range's beginning.
	// The lower bound and the cursor are never both conditions: the scan might start at the lower
	// one and read every row up to the cursor.
	if s.After != nil && s.After.Text >= s.Prefix {
		b.WriteString(" and (" + key + ", id) > (" + arg(s.After.Text) + ` collate "C", ` + arg(s.After.ID) + "::uuid)")
	} else if s.Prefix != "" {
		b.WriteString(" and " + key + " >= " + arg(s.Prefix) + ` collate "C"`)
	}
	if end, ok := PrefixEnd(s.Prefix); ok {
		b.WriteString(" and " + key + " < " + arg(end) + ` collate "C"`)
	}
	b.WriteString(" order by " + key + ", id limit " + arg(s.Limit))
	return b.String(), args
}
