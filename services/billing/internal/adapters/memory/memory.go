package memory

import (
	"sync"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Store implements app.Store. One mutex serialises every write, which is the memory form of the
// Postgres store's row locks and transactions: a write that spans two aggregates happens under it
// at once. Each port's methods are in the file named for it.
type Store struct {
	mu          sync.Mutex
	connections []domain.Connection
	settings    map[string]domain.Settings
	prices      []domain.CatalogPrice
	taxRates    []domain.CatalogTaxRate
	promotions  []domain.Promotion
	redeemed    map[[2]string]bool // (promotion id, tenant id)
	rewarded    map[string]bool    // referred tenant ids
	uses        []domain.PromotionUse
	accounts    map[[2]string]domain.Account
	customers   []domain.Customer
	checkouts   map[string]domain.CheckoutSession
	charges     map[string]domain.Charge
	outbox      *events.MemoryOutbox
}

// New returns an empty store whose events go to outbox.
func New(outbox *events.MemoryOutbox) *Store {
	return &Store{settings: map[string]domain.Settings{}, redeemed: map[[2]string]bool{}, rewarded: map[string]bool{},
		accounts: map[[2]string]domain.Account{}, checkouts: map[string]domain.CheckoutSession{}, charges: map[string]domain.Charge{}, outbox: outbox}
}

var _ app.Store = (*Store)(nil)
