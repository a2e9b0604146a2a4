package memory

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// Store holds every identity entity. Values are copied in and out so that callers can never alias
// stored state.
type Store struct {
	mu       sync.Mutex
	outbox   *events.MemoryOutbox
	projects map[string]domain.Project
	apps     map[string]domain.App
	keys     map[string]domain.APIKey
	users    map[string]domain.User
	roles    map[string]domain.UserRole
	codes    map[string]domain.AuthCode      // by string(hash)
	families map[string]domain.RefreshFamily // by id
	refresh  map[string]domain.RefreshToken  // by string(hash)
	attempts map[string][]attempt            // by key
	members  map[string]domain.ProjectMember // by id
	// referrals are the invites' referral codes, by string(hash).
	referrals map[string]domain.Referral
	// challenges are the mails' challenges, by id.
	challenges map[string]domain.Challenge
	// providers are the apps' provider slots, by providerKey; links the provider identities by
	// linkKey.
	providers map[string]domain.IdentityProvider
	links     map[string]domain.ProviderLink
	// factors are the users' second factors, by id; recovery the recovery codes, by user id.
	factors  map[string]domain.Factor
	recovery map[string][]domain.RecoveryCode
	// operatorKey is the sealed operator signing key; nil until the first operator token.
	operatorKey []byte
	memberState
}

var _ app.Store = (*Store)(nil)

// New returns an empty store that adds the events of its changes to outbox.
func New(outbox *events.MemoryOutbox) *Store {
	return &Store{
		outbox:     outbox,
		projects:   map[string]domain.Project{},
		apps:       map[string]domain.App{},
		keys:       map[string]domain.APIKey{},
		users:      map[string]domain.User{},
		roles:      map[string]domain.UserRole{},
		codes:      map[string]domain.AuthCode{},
		families:   map[string]domain.RefreshFamily{},
		refresh:    map[string]domain.RefreshToken{},
		attempts:   map[string][]attempt{},
		members:    map[string]domain.ProjectMember{},
		referrals:  map[string]domain.Referral{},
		challenges: map[string]domain.Challenge{},
		providers:  map[string]domain.IdentityProvider{},
		links:      map[string]domain.ProviderLink{},
		factors:    map[string]domain.Factor{},
		recovery:   map[string][]domain.RecoveryCode{},

		memberState: newMemberState(),
	}
}

// CreateProject implements app.Projects.
func (s *Store) CreateProject(_ context.Context, p domain.Project) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.projects[p.ID] = p
	return nil
}

// GetProject implements app.Projects.
func (s *Store) GetProject(_ context.Context, id string) (domain.Project, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.projects[id]
	if !ok {
		return domain.Project{}, domain.NotFound("project")
	}
	return p, nil
}

func cloneApp(a domain.App) domain.App {
	a.RedirectURIs = slices.Clone(a.RedirectURIs)
	a.ExtraOrigins = slices.Clone(a.ExtraOrigins)
	a.SealedPrivateKey = bytes.Clone(a.SealedPrivateKey)
	return a
}

// CreateApp implements app.Apps.
func (s *Store) CreateApp(_ context.Context, a domain.App) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.projects[a.ProjectID]; !ok {
		return domain.NotFound("project")
	}
	s.apps[a.ID] = cloneApp(a)
	return nil
}

// GetApp implements app.Apps.
func (s *Store) GetApp(_ context.Context, id string) (domain.App, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.apps[id]
	if !ok {
		return domain.App{}, domain.NotFound("app")
	}
	return cloneApp(a), nil
}

// ListApps implements app.Apps.
func (s *Store) ListApps(_ context.Context) ([]domain.App, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]domain.App, 0, len(s.apps))
	for _, a := range s.apps {
		out = append(out, cloneApp(a))
	}
	slices.SortFunc(out, func(a, b domain.App) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// UpdateApp implements app.Apps.
func (s *Store) UpdateApp(ctx context.Context, id string, fn func(*domain.App) ([]events.Event, error)) (domain.App, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, evs, err := s.changedApp(id, fn)
	if err != nil {
		return domain.App{}, err
	}
	s.apps[id] = cloneApp(next)
	s.outbox.Add(ctx, evs...)
	return next, nil
}

// changedApp runs fn on a copy of the app, storing nothing: the caller stores it with the rest of
// its change. Callers hold mu.
func (s *Store) changedApp(id string, fn func(*domain.App) ([]events.Event, error)) (domain.App, []events.Event, error) {
	cur, ok := s.apps[id]
	if !ok {
		return domain.App{}, nil, domain.NotFound("app")
	}
	next := cloneApp(cur)
	evs, err := fn(&next)
	if err != nil {
		return domain.App{}, nil, err
	}
	next.ID = cur.ID // the id is the key; fn cannot move the row
	return next, evs, nil
}

// CreateAPIKey implements app.APIKeys.
func (s *Store) CreateAPIKey(ctx context.Context, k domain.APIKey, evs ...events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.apps[k.AppID]; !ok {
		return domain.NotFound("app")
	}
	k.Hash = bytes.Clone(k.Hash)
	s.keys[k.ID] = k
	s.outbox.Add(ctx, evs...)
	return nil
}

// GetAPIKey implements app.APIKeys.
func (s *Store) GetAPIKey(_ context.Context, id string) (domain.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return domain.APIKey{}, domain.NotFound("API key")
	}
	k.Hash = bytes.Clone(k.Hash)
	return k, nil
}

func cloneUser(u domain.User) domain.User {
	if u.LastSignInAt != nil {
		t := *u.LastSignInAt
		u.LastSignInAt = &t
	}
	return u
}

// emailUsed reports whether another live user of appID has email (case-insensitively); deleted
// users free their address. Callers hold mu.
func (s *Store) emailUsed(appID, email, exceptID string) bool {
	for _, u := range s.users {
		if u.AppID == appID && u.ID != exceptID && !u.Deleted && strings.EqualFold(u.Email, email) {
			return true
		}
	}
	return false
}

// CreateUser implements app.Users.
func (s *Store) CreateUser(ctx context.Context, u domain.User, evs ...events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.apps[u.AppID]; !ok {
		return domain.NotFound("app")
	}
	if !u.Deleted && s.emailUsed(u.AppID, u.Email, u.ID) {
		return domain.ErrEmailTaken
	}
	s.users[u.ID] = cloneUser(u)
	s.outbox.Add(ctx, evs...)
	return nil
}

// GetUser implements app.Users.
func (s *Store) GetUser(_ context.Context, appID, userID string) (domain.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[userID]
	if !ok || u.AppID != appID {
		return domain.User{}, domain.NotFound("user")
	}
	return cloneUser(u), nil
}

// GetUserByEmail implements app.Users.
func (s *Store) GetUserByEmail(_ context.Context, appID, email string) (domain.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var (
		best  domain.User
		found bool
	)
	for _, u := range s.users {
		if u.AppID != appID || !strings.EqualFold(u.Email, email) {
			continue
		}
		if !found || preferred(u, best) {
			best, found = u, true
		}
	}
	if !found {
		return domain.User{}, domain.NotFound("user")
	}
	return cloneUser(best), nil
}

// preferred orders users sharing an address as the SQL adapter does: live first, then the most
// recently updated, then by id.
func preferred(a, b domain.User) bool {
	if a.Deleted != b.Deleted {
		return !a.Deleted
	}
	if !a.UpdatedAt.Equal(b.UpdatedAt) {
		return a.UpdatedAt.After(b.UpdatedAt)
	}
	return a.ID < b.ID
}

// DeleteUser implements app.Users.
func (s *Store) DeleteUser(ctx context.Context, appID, userID string, now time.Time, fn func(domain.User, int) ([]events.Event, error)) (domain.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.users[userID]
	if !ok || cur.AppID != appID {
		return domain.User{}, domain.NotFound("user")
	}
	next := cloneUser(cur)
	if err := next.MarkDeleted(now); err != nil {
		return domain.User{}, err
	}
	left := 0
	for _, u := range s.users {
		if cur.TenantID != "" && u.AppID == appID && u.TenantID == cur.TenantID && !u.Deleted && u.ID != userID {
			left++
		}
	}
	evs, err := fn(cloneUser(next), left)
	if err != nil {
		return domain.User{}, err
	}
	s.users[userID] = cloneUser(next)
	s.outbox.Add(ctx, evs...)
	return next, nil
}

// UpdateUser implements app.Users.
func (s *Store) UpdateUser(ctx context.Context, appID, userID string, fn func(*domain.User) ([]events.Event, error)) (domain.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, evs, err := s.changedUser(appID, userID, fn)
	if err != nil {
		return domain.User{}, err
	}
	s.users[userID] = cloneUser(next)
	s.outbox.Add(ctx, evs...)
	return next, nil
}

// changedUser runs fn on a copy of the user and checks the result, storing nothing: the caller
// stores it with the rest of its change. Callers hold mu.
func (s *Store) changedUser(appID, userID string, fn func(*domain.User) ([]events.Event, error)) (domain.User, []events.Event, error) {
	cur, ok := s.users[userID]
	if !ok || cur.AppID != appID {
		return domain.User{}, nil, domain.NotFound("user")
	}
	next := cloneUser(cur)
	evs, err := fn(&next)
	if err != nil {
		return domain.User{}, nil, err
	}
	next.ID, next.AppID = cur.ID, cur.AppID // fn cannot move the user to another row or app
	if !next.Deleted && s.emailUsed(appID, next.Email, userID) {
		return domain.User{}, nil, domain.ErrEmailTaken
	}
	return next, evs, nil
}

// ListTenantUsers implements app.Users.
func (s *Store) ListTenantUsers(_ context.Context, appID, tenantID string) ([]domain.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.User
	for _, u := range s.users {
		if tenantID != "" && u.AppID == appID && u.TenantID == tenantID && !u.Deleted {
			out = append(out, cloneUser(u))
		}
	}
	// Ids break ties so that the order is total, as in the SQL adapter.
	slices.SortFunc(out, func(a, b domain.User) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// CreateRole implements app.Roles.
func (s *Store) CreateRole(_ context.Context, r domain.UserRole) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.apps[r.AppID]; !ok {
		return domain.NotFound("app")
	}
	for _, other := range s.roles {
		if other.AppID == r.AppID && strings.EqualFold(other.Name, r.Name) {
			return domain.ErrRoleTaken
		}
	}
	s.roles[r.ID] = r
	return nil
}

// ListRoles implements app.Roles.
func (s *Store) ListRoles(_ context.Context, appID string) ([]domain.UserRole, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.UserRole
	for _, r := range s.roles {
		if r.AppID == appID {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b domain.UserRole) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}
