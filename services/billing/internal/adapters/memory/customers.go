package memory

import (
	"context"
	"slices"

	"github.com/berthhq/berth/services/billing/internal/domain"
)

// SaveCustomer stores c unless its connection, tenant and mode have one, and returns the stored one.
func (s *Store) SaveCustomer(_ context.Context, c domain.Customer) (domain.Customer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if got, ok := s.customerOf(c.ConnectionID, c.TenantID, c.Test); ok {
		return got, nil
	}
	s.customers = append(s.customers, c)
	return c, nil
}

// Customer returns the tenant's customer on a connection and mode.
func (s *Store) Customer(_ context.Context, connectionID, tenantID string, test bool) (domain.Customer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.customerOf(connectionID, tenantID, test); ok {
		return c, nil
	}
	return domain.Customer{}, domain.ErrCustomerNotFound
}

// CustomerByProviderID returns the customer with the provider's id.
func (s *Store) CustomerByProviderID(_ context.Context, providerCustomerID string) (domain.Customer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.customers, func(c domain.Customer) bool { return c.ID == providerCustomerID })
	if i < 0 {
		return domain.Customer{}, domain.ErrCustomerNotFound
	}
	return s.customers[i], nil
}

func (s *Store) customerOf(connectionID, tenantID string, test bool) (domain.Customer, bool) {
	i := slices.IndexFunc(s.customers, func(c domain.Customer) bool {
		return c.ConnectionID == connectionID && c.TenantID == tenantID && c.Test == test
	})
	if i < 0 {
		return domain.Customer{}, false
	}
	return s.customers[i], true
}
