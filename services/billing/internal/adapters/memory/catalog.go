package memory

import (
	"context"

	"github.com/berthhq/berth/services/billing/internal/domain"
)

// CreateCatalogPrice stores p.
func (s *Store) CreateCatalogPrice(_ context.Context, p domain.CatalogPrice) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prices = append(s.prices, p)
	return nil
}

// CreateCatalogTaxRate stores r.
func (s *Store) CreateCatalogTaxRate(_ context.Context, r domain.CatalogTaxRate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.taxRates = append(s.taxRates, r)
	return nil
}

// Catalog lists the app's prices and tax rates.
func (s *Store) Catalog(_ context.Context, appID string) ([]domain.CatalogPrice, []domain.CatalogTaxRate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var prices []domain.CatalogPrice
	var rates []domain.CatalogTaxRate
	for _, p := range s.prices {
		if p.AppID == appID {
			prices = append(prices, p)
		}
	}
	for _, r := range s.taxRates {
		if r.AppID == appID {
			rates = append(rates, r)
		}
	}
	return prices, rates, nil
}
