package memory

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// key identifies a snapshot: ids are unique per app only as far as analytics may assume.
type key struct{ appID, id string }

// Store implements app.Store.
type Store struct {
	mu            sync.Mutex
	signIns       map[string]domain.SignIn // by id
	users         map[key]app.UserSnapshot
	tenants       map[key]app.TenantSnapshot
	tenantDays    map[key]map[time.Time]bool       // days each tenant changed
	subscriptions map[key]domain.Subscription      // by app and provider subscription id
	payments      map[key]map[string]time.Time     // each subscription's payments: key -> at
	oneTime       map[string]domain.OneTimePayment // by id
	facts         map[factKey]domain.Fact
	audit         auditLog
}

// New returns an empty store.
func New() *Store {
	s := &Store{audit: auditLog{entries: map[string]domain.AuditEntry{}, retention: map[string]int{}}}
	s.empty()
	return s
}

// Reset empties the store.
func (s *Store) Reset(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.empty()
	return nil
}

// empty sets every map to a new, empty one (the mutex is left alone: Reset holds it).
func (s *Store) empty() {
	s.signIns, s.users, s.tenants = map[string]domain.SignIn{}, map[key]app.UserSnapshot{}, map[key]app.TenantSnapshot{}
	s.tenantDays, s.subscriptions = map[key]map[time.Time]bool{}, map[key]domain.Subscription{}
	s.payments, s.oneTime = map[key]map[string]time.Time{}, map[string]domain.OneTimePayment{}
	s.facts = map[factKey]domain.Fact{}
}

// RecordSignIn stores s unless its id is taken.
func (s *Store) RecordSignIn(_ context.Context, in domain.SignIn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.signIns[in.ID]; !ok {
		s.signIns[in.ID] = in
	}
	return nil
}

// PutUser stores a copy of u unless the stored snapshot is newer; deletion is kept.
func (s *Store) PutUser(_ context.Context, u app.UserSnapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{u.AppID, u.UserID}
	stored, ok := s.users[k]
	if ok && stored.AsOf.After(u.AsOf) {
		return nil
	}
	u = cloneUser(u)
	u.Deleted = u.Deleted || stored.Deleted
	s.users[k] = u
	return nil
}

// MarkUserDeleted marks the user deleted, storing a data-less snapshot when there is none.
func (s *Store) MarkUserDeleted(_ context.Context, appID, userID, tenantRef string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{appID, userID}
	stored, ok := s.users[k]
	if !ok {
		s.users[k] = app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantRef, Deleted: true, AsOf: at}
		return nil
	}
	stored.Deleted = true
	if at.After(stored.AsOf) {
		stored.AsOf = at
	}
	s.users[k] = stored
	return nil
}

// PutTenant stores a copy of t unless the stored snapshot is newer.
func (s *Store) PutTenant(_ context.Context, t app.TenantSnapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{t.AppID, t.TenantID}
	if s.tenantDays[k] == nil {
		s.tenantDays[k] = map[time.Time]bool{}
	}
	s.tenantDays[k][domain.Day(t.AsOf)] = true
	if stored, ok := s.tenants[k]; ok && stored.AsOf.After(t.AsOf) {
		return nil
	}
	t.Tenant = proto.CloneOf(t.Tenant)
	s.tenants[k] = t
	return nil
}

// ListSignIns returns the app's sign-ins in [from, to) with copies of their snapshots.
func (s *Store) ListSignIns(_ context.Context, appID string, from, to time.Time) ([]app.SignInRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []app.SignInRecord{}
	for _, in := range s.signIns {
		if in.AppID != appID || in.At.Before(from) || !in.At.Before(to) {
			continue
		}
		p := s.payer(appID, in.UserID)
		out = append(out, app.SignInRecord{SignIn: in, User: p.User, Tenant: p.Tenant})
	}
	slices.SortFunc(out, func(a, b app.SignInRecord) int {
		if c := b.SignIn.At.Compare(a.SignIn.At); c != 0 {
			return c
		}
		return cmp.Compare(b.SignIn.ID, a.SignIn.ID)
	})
	return out, nil
}

// payer returns copies of the snapshots of user userID and of its current tenant ("" has none).
func (s *Store) payer(appID, userID string) app.Payer {
	var p app.Payer
	u, ok := s.users[key{appID, userID}]
	if !ok || userID == "" {
		return p
	}
	u = cloneUser(u)
	p.User = &u
	if t, ok := s.tenants[key{appID, u.TenantRef}]; ok && u.TenantRef != "" {
		t.Tenant = proto.CloneOf(t.Tenant)
		p.Tenant = &t
	}
	return p
}

func cloneUser(u app.UserSnapshot) app.UserSnapshot {
	u.User = proto.CloneOf(u.User)
	return u
}
