package keyset

import (
	"strconv"
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

// Newest is a row's position in a list read newest first (analytics' audit log): its time, kept
// to the microsecond as the stores keep it, then its id, both descending. It is the same rule as
// Key's, for a list whose order is a time: the page after a cursor holds exactly the rows older
// than it, so rows recorded meanwhile (newer ones) neither repeat nor shift a later page, and rows
// of one microsecond are told apart by their ids.
type Newest struct {
	At time.Time
	ID string
}

// NewestOf is the position of a row recorded at at with id id; at is cut to the microsecond, as
// the stores keep it, so a position read back from a cursor compares equal to its row's.
func NewestOf(at time.Time, id string) Newest {
	return Newest{At: at.UTC().Truncate(time.Microsecond), ID: id}
}

// Older reports whether k comes after o in the newest-first order: an earlier time, or the same
// time and a lower id. It is the stores' order (the SQL `(at, id) < (o.at, o.id)`).
func (k Newest) Older(o Newest) bool {
	if !k.At.Equal(o.At) {
		return k.At.Before(o.At)
	}
	return k.ID < o.ID
}

// Encode is the opaque cursor of k: base64url of its Unix microseconds and its id.
func (k Newest) Encode() string {
	return encodePair(strconv.FormatInt(k.At.UnixMicro(), 10), k.ID)
}

// DecodeNewest reads a cursor made by Newest.Encode: nil for "" (the newest row), InvalidArgument
// naming field for anything Encode cannot have made.
func DecodeNewest(field, cursor string) (*Newest, error) {
	if cursor == "" {
		return nil, nil
	}
	micros, id, ok := decodePair(cursor)
	n, err := strconv.ParseInt(micros, 10, 64)
	if !ok || err != nil || strconv.FormatInt(n, 10) != micros {
		return nil, fault.InvalidField(field, "is not a cursor of this list")
	}
	return &Newest{At: time.UnixMicro(n).UTC(), ID: id}, nil
}
