package pgxx_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
)

func TestAChangedKeyIsRefusedByNameAndTheSameKeyPasses(t *testing.T) {
	t.Parallel()
	stores := []struct {
		name string
		new  func(t *testing.T) (pgxx.KeyCheckStore, func() [][]byte)
	}{
		{"memory", func(*testing.T) (pgxx.KeyCheckStore, func() [][]byte) {
			s := &pgxx.MemoryKeyChecks{}
			return s, func() [][]byte {
				v, _ := s.LoadOrStore(context.Background(), "BERTH_SECRET_KEY", nil)
				return [][]byte{v}
			}
		}},
		{"postgres", func(t *testing.T) (pgxx.KeyCheckStore, func() [][]byte) {
			pool := pgtest.New(t, "pgxx-keychecks", func(ctx context.Context, pool *pgxpool.Pool) error {
				return pgxx.MigrateSets(ctx, pool, pgxx.KeyCheckSet)
			})
			return pgxx.PGKeyChecks{Pool: pool}, func() [][]byte {
				var stored [][]byte
				rows, err := pool.Query(context.Background(), "select check_value from key_checks")
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var v []byte
					if err := rows.Scan(&v); err != nil {
						t.Fatal(err)
					}
					stored = append(stored, v)
				}
				return stored
			}
		}},
	}
	first, other := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	check := func(key []byte) pgxx.KeyCheck {
		return pgxx.KeyCheck{Setting: "BERTH_SECRET_KEY", Key: key, Was: "the key this database was sealed with"}
	}
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, stored := s.new(t)
			if err := pgxx.CheckKeys(ctx, store, check(first)); err != nil {
				t.Fatalf("first start: %v", err)
			}
			values := stored()
			if len(values) != 1 || len(values[0]) == 0 || bytes.Contains(values[0], first) {
				t.Fatalf("stored %x, want one check value that is not the key", values)
			}
			if err := pgxx.CheckKeys(ctx, store, check(first)); err != nil {
				t.Fatalf("same key: %v", err)
			}
			err := pgxx.CheckKeys(ctx, store, check(other))
			var invalid *config.InvalidError
			if !errors.As(err, &invalid) || len(invalid.Problems) != 1 {
				t.Fatalf("other key: %v, want one settings refusal", err)
			}
			want := "BERTH_SECRET_KEY (secret): does not match the key this database was sealed with; restore the old value (key rotation: " + pgxx.RotationDoc + ")"
			if err.Error() != want {
				t.Fatalf("other key: %q, want %q", err, want)
			}
			if strings.Contains(err.Error(), string(other)) {
				t.Fatal("the refusal shows the key")
			}
			// The refusal stored nothing: the old key still passes.
			if err := pgxx.CheckKeys(ctx, store, check(first)); err != nil {
				t.Fatalf("old key after a refusal: %v", err)
			}
		})
	}
}

func TestTwoSettingsWithOneValueStoreDifferentChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &pgxx.MemoryKeyChecks{}
	key := bytes.Repeat([]byte{7}, 32)
	if err := pgxx.CheckKeys(ctx, store, pgxx.KeyCheck{Setting: "A", Key: key}, pgxx.KeyCheck{Setting: "B", Key: key}); err != nil {
		t.Fatal(err)
	}
	a, _ := store.LoadOrStore(ctx, "A", nil)
	b, _ := store.LoadOrStore(ctx, "B", nil)
	if bytes.Equal(a, b) {
		t.Fatal("one check value for two settings: the table would show they share a key")
	}
}
