package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/services/billing/internal/domain"
)

// CreateCatalogPrice inserts p.
func (s *Store) CreateCatalogPrice(ctx context.Context, p domain.CatalogPrice) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO catalog_prices (id, app_id, product_name, amount, currency, interval, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, p.ID, p.AppID, p.ProductName, p.Amount, p.Currency, p.Interval, p.CreatedAt)
	return err
}

// CreateCatalogTaxRate inserts r.
func (s *Store) CreateCatalogTaxRate(ctx context.Context, r domain.CatalogTaxRate) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO catalog_tax_rates (id, app_id, display_name, basis_points, inclusive, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, r.ID, r.AppID, r.DisplayName, r.BasisPoints, r.Inclusive, r.CreatedAt)
	return err
}

// Catalog lists an app's prices and tax rates, oldest first.
func (s *Store) Catalog(ctx context.Context, appID string) ([]domain.CatalogPrice, []domain.CatalogTaxRate, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, app_id::text, product_name, amount, currency, interval, created_at
		FROM catalog_prices WHERE app_id = $1 ORDER BY created_at, id`, appID)
	if err != nil {
		return nil, nil, err
	}
	prices, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.CatalogPrice, error) {
		var p domain.CatalogPrice
		err := r.Scan(&p.ID, &p.AppID, &p.ProductName, &p.Amount, &p.Currency, &p.Interval, &p.CreatedAt)
		p.CreatedAt = p.CreatedAt.UTC()
		return p, err
	})
	if err != nil {
		return nil, nil, err
	}
	rows, err = s.pool.Query(ctx, `SELECT id, app_id::text, display_name, basis_points, inclusive, created_at
		FROM catalog_tax_rates WHERE app_id = $1 ORDER BY created_at, id`, appID)
	if err != nil {
		return nil, nil, err
	}
	rates, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (domain.CatalogTaxRate, error) {
		var t domain.CatalogTaxRate
		err := r.Scan(&t.ID, &t.AppID, &t.DisplayName, &t.BasisPoints, &t.Inclusive, &t.CreatedAt)
		t.CreatedAt = t.CreatedAt.UTC()
		return t, err
	})
	return prices, rates, err
}
