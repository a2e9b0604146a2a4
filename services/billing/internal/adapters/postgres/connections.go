package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// webhookSecret is the stored JSON form of a domain.WebhookSecret ([]byte becomes base64).
type webhookSecret struct {
	ID        string    `json:"id"`
	Test      bool      `json:"test"`
	Sealed    []byte    `json:"sealed"`
	CreatedAt time.Time `json:"createdAt"`
}

const connectionColumns = "id::text, app_id::text, provider, test_key, live_key, webhook_secrets, created_at, updated_at"

func scanConnection(row pgx.Row) (domain.Connection, error) {
	var c domain.Connection
	var provider string
	var secrets []webhookSecret
	if err := row.Scan(&c.ID, &c.AppID, &provider, &c.TestKey, &c.LiveKey, &secrets, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return domain.Connection{}, err
	}
	c.Provider = domain.Provider(provider)
	for _, w := range secrets {
		c.WebhookSecrets = append(c.WebhookSecrets, domain.WebhookSecret{ID: w.ID, Test: w.Test, Sealed: w.Sealed, CreatedAt: w.CreatedAt.UTC()})
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

func secretsJSON(c domain.Connection) []webhookSecret {
	out := []webhookSecret{}
	for _, w := range c.WebhookSecrets {
		out = append(out, webhookSecret{ID: w.ID, Test: w.Test, Sealed: w.Sealed, CreatedAt: w.CreatedAt})
	}
	return out
}

// CreateConnection inserts c.
func (s *Store) CreateConnection(ctx context.Context, c domain.Connection) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO connections (id, app_id, provider, test_key, live_key, webhook_secrets, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.ID, c.AppID, string(c.Provider), c.TestKey, c.LiveKey, secretsJSON(c), c.CreatedAt, c.UpdatedAt)
	if err != nil {
		return fmt.Errorf("insert connection: %w", err)
	}
	return nil
}

// Connection reads a connection by id.
func (s *Store) Connection(ctx context.Context, id string) (domain.Connection, error) {
	return s.connection(ctx, pgxx.Q(ctx, s.pool), id, "")
}

func (s *Store) connection(ctx context.Context, q pgxx.Querier, id, lock string) (domain.Connection, error) {
	if !isUUID(id) {
		return domain.Connection{}, domain.ErrConnectionNotFound
	}
	c, err := scanConnection(q.QueryRow(ctx, "SELECT "+connectionColumns+" FROM connections WHERE id = $1"+lock, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Connection{}, domain.ErrConnectionNotFound
	}
	if err != nil {
		return domain.Connection{}, fmt.Errorf("select connection: %w", err)
	}
	return c, nil
}

// Connections lists an app's connections, oldest first.
func (s *Store) Connections(ctx context.Context, appID string) ([]domain.Connection, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+connectionColumns+" FROM connections WHERE app_id = $1 ORDER BY created_at, id", appID)
	if err != nil {
		return nil, fmt.Errorf("select connections: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.Connection, error) { return scanConnection(r) })
}

// UpdateConnection locks the connection row, runs fn and stores the result.
func (s *Store) UpdateConnection(ctx context.Context, id string, fn func(*domain.Connection) error) (domain.Connection, error) {
	var out domain.Connection
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		c, err := s.connection(ctx, tx, id, " FOR UPDATE")
		if err != nil {
			return err
		}
		if err := fn(&c); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE connections SET test_key = $2, live_key = $3, webhook_secrets = $4, updated_at = $5 WHERE id = $1`,
			c.ID, c.TestKey, c.LiveKey, secretsJSON(c), c.UpdatedAt)
		out = c
		return err
	})
	return out, err
}
