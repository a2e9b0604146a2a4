package pgxx

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/config"
)

//go:embed keychecks/*.sql
var keyCheckFiles embed.FS

// KeyCheckSet is the migration set of the key_checks table: a module whose database depends on a
// key (KeyCheck) migrates it beside its own set.
var KeyCheckSet = Set{Component: "keychecks", Files: keyCheckFiles, Dir: "keychecks"}

// RotationDoc is where the refusal of a changed key sends the operator.
const RotationDoc = "docs/operations.md#keys-a-database-depends-on"

// KeyCheck is a key the contents of a database depend on: API-key hashes peppered with it, secrets
// sealed under it. Another value at a later start cannot read what the first one wrote.
type KeyCheck struct {
	Setting string // the variable the key comes from, named in the refusal
	Key     []byte
	// Was finishes "does not match ...": what the database's contents were made with.
	Was string
}

// KeyCheckStore keeps one check value per setting name.
type KeyCheckStore interface {
	// LoadOrStore returns the check value stored for name, storing check first when there is none.
	LoadOrStore(ctx context.Context, name string, check []byte) ([]byte, error)
}

// checkLabel is what the check value authenticates: a fixed text, so the stored value reveals
// nothing of the key, yet only the same key reproduces it.
const checkLabel = "berth key check v1: "

// checkValue is HMAC-SHA256 under key of the label and the setting's name, so two settings that
// happen to share a value still store different checks.
func checkValue(setting string, key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(checkLabel + setting))
	return m.Sum(nil)
}

// CheckKeys stores each key's check value on the first start and refuses, on every later one, a
// key whose value differs: a *config.InvalidError with one line per changed key, naming its
// variable, so the process stops as it does for a bad setting rather than failing request by
// request. The comparison takes constant time.
func CheckKeys(ctx context.Context, store KeyCheckStore, keys ...KeyCheck) error {
	var problems []error
	for _, k := range keys {
		want := checkValue(k.Setting, k.Key)
		stored, err := store.LoadOrStore(ctx, k.Setting, want)
		if err != nil {
			return fmt.Errorf("key check of %s: %w", k.Setting, err)
		}
		if !hmac.Equal(stored, want) {
			problems = append(problems, fmt.Errorf("%s (secret): does not match %s; restore the old value (key rotation: %s)",
				k.Setting, k.Was, RotationDoc))
		}
	}
	if len(problems) > 0 {
		return &config.InvalidError{Problems: problems}
	}
	return nil
}

// KeyChecks is where a module keeps its check values: pool's key_checks table, or, on memory
// stores (pool nil), a map that lives as long as the stores do, so both start the same way.
func KeyChecks(pool *pgxpool.Pool) KeyCheckStore {
	if pool == nil {
		return &MemoryKeyChecks{}
	}
	return PGKeyChecks{Pool: pool}
}

// PGKeyChecks keeps the check values in a database's key_checks table (KeyCheckSet).
type PGKeyChecks struct{ Pool *pgxpool.Pool }

// LoadOrStore implements KeyCheckStore. Replicas starting together race on the insert; the primary
// key lets one win and every one reads the winner's value.
func (s PGKeyChecks) LoadOrStore(ctx context.Context, name string, check []byte) ([]byte, error) {
	if _, err := Q(ctx, s.Pool).Exec(ctx, `insert into key_checks (name, check_value) values ($1, $2) on conflict (name) do nothing`,
		name, check); err != nil {
		return nil, err
	}
	var stored []byte
	err := Q(ctx, s.Pool).QueryRow(ctx, `select check_value from key_checks where name = $1`, name).Scan(&stored)
	return stored, err
}

// MemoryKeyChecks keeps the check values of memory stores, which live as long as the process.
type MemoryKeyChecks struct {
	mu     sync.Mutex
	checks map[string][]byte
}

// LoadOrStore implements KeyCheckStore.
func (s *MemoryKeyChecks) LoadOrStore(_ context.Context, name string, check []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stored, ok := s.checks[name]; ok {
		return stored, nil
	}
	if s.checks == nil {
		s.checks = map[string][]byte{}
	}
	s.checks[name] = check
	return check, nil
}
