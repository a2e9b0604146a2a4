package memory

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// memberState holds the console's member accounts and what hangs off them; its maps live in the
// Store under the store's one lock.
type memberState struct {
	accounts    map[string]domain.MemberAccount   // by id
	invitations map[string]domain.Invitation      // by string(hash)
	sessions    map[string]domain.MemberSession   // by id
	mchallenges map[string]domain.MemberChallenge // by id
	mfactors    map[string][]domain.Factor        // by account id, oldest first
	mrecovery   map[string][]domain.RecoveryCode  // by account id
}

func newMemberState() memberState {
	return memberState{
		accounts: map[string]domain.MemberAccount{}, invitations: map[string]domain.Invitation{},
		sessions: map[string]domain.MemberSession{}, mchallenges: map[string]domain.MemberChallenge{},
		mfactors: map[string][]domain.Factor{}, mrecovery: map[string][]domain.RecoveryCode{},
	}
}

func timePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

func cloneMember(m domain.ProjectMember) domain.ProjectMember {
	m.AcceptedAt = timePtr(m.AcceptedAt)
	return m
}

func cloneInvitation(i domain.Invitation) domain.Invitation {
	i.Hash, i.UsedAt = bytes.Clone(i.Hash), timePtr(i.UsedAt)
	return i
}

// InviteProjectMember implements app.MemberAccounts.
func (s *Store) InviteProjectMember(_ context.Context, m domain.ProjectMember, inv domain.Invitation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.addMember(m); err != nil {
		return err
	}
	s.invitations[string(inv.Hash)] = cloneInvitation(inv)
	return nil
}

// GetInvitation implements app.MemberAccounts.
func (s *Store) GetInvitation(_ context.Context, hash []byte) (domain.Invitation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.invitations[string(hash)]
	if !ok {
		return domain.Invitation{}, domain.NotFound("invitation")
	}
	return cloneInvitation(i), nil
}

// AcceptInvitation implements app.MemberAccounts.
func (s *Store) AcceptInvitation(_ context.Context, hash []byte, a domain.MemberAccount, now time.Time) (domain.ProjectMember, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inv, ok := s.invitations[string(hash)]
	if !ok || !inv.Live(now) {
		return domain.ProjectMember{}, domain.ErrInvitationSpent
	}
	if _, exists := s.accounts[a.ID]; !exists {
		for _, other := range s.accounts {
			if other.Email == a.Email {
				return domain.ProjectMember{}, domain.ErrMemberAccountTaken
			}
		}
		s.accounts[a.ID] = a
	}
	inv.UsedAt = &now
	s.invitations[string(hash)] = inv
	m := s.members[inv.MemberID]
	m.AccountID, m.AcceptedAt = a.ID, &now
	s.members[m.ID] = m
	return cloneMember(m), nil
}

// GetMemberAccount implements app.MemberAccounts.
func (s *Store) GetMemberAccount(_ context.Context, id string) (domain.MemberAccount, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.accounts[id]
	if !ok {
		return domain.MemberAccount{}, domain.NotFound("member account")
	}
	return a, nil
}

// GetMemberAccountByEmail implements app.MemberAccounts.
func (s *Store) GetMemberAccountByEmail(_ context.Context, email string) (domain.MemberAccount, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	email = domain.NormalizeMemberEmail(email)
	for _, a := range s.accounts {
		if a.Email == email {
			return a, nil
		}
	}
	return domain.MemberAccount{}, domain.NotFound("member account")
}

// membersWhere returns the members keep selects, oldest first (then by id). Callers hold mu.
func (s *Store) membersWhere(keep func(domain.ProjectMember) bool) []domain.ProjectMember {
	out := []domain.ProjectMember{}
	for _, m := range s.members {
		if keep(m) {
			out = append(out, cloneMember(m))
		}
	}
	slices.SortFunc(out, func(a, b domain.ProjectMember) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out
}

// ListAccountMemberships implements app.MemberAccounts.
func (s *Store) ListAccountMemberships(_ context.Context, accountID string) ([]domain.ProjectMember, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.membersWhere(func(m domain.ProjectMember) bool { return accountID != "" && m.AccountID == accountID }), nil
}

// ListProjectMembers implements app.MemberAccounts.
func (s *Store) ListProjectMembers(_ context.Context, projectID string) ([]domain.ProjectMember, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.membersWhere(func(m domain.ProjectMember) bool { return m.ProjectID == projectID }), nil
}

func cloneSession(m domain.MemberSession) domain.MemberSession {
	m.EndedAt = timePtr(m.EndedAt)
	return m
}

// CreateMemberSession implements app.MemberSessions.
func (s *Store) CreateMemberSession(_ context.Context, m domain.MemberSession) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[m.AccountID]; !ok {
		return domain.NotFound("member account")
	}
	if _, ok := s.members[m.MemberID]; !ok {
		return domain.NotFound("project member")
	}
	s.sessions[m.ID] = cloneSession(m)
	return nil
}

// GetMemberSession implements app.MemberSessions.
func (s *Store) GetMemberSession(_ context.Context, id string) (domain.MemberSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.sessions[id]
	if !ok {
		return domain.MemberSession{}, domain.NotFound("member session")
	}
	return cloneSession(m), nil
}

// TouchMemberSession implements app.MemberSessions.
func (s *Store) TouchMemberSession(_ context.Context, id string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.sessions[id]
	if !ok {
		return domain.NotFound("member session")
	}
	if m.Live(now) {
		m.LastUsedAt = now
		s.sessions[id] = m
	}
	return nil
}

// EndMemberSession implements app.MemberSessions.
func (s *Store) EndMemberSession(ctx context.Context, id string, now time.Time, evs ...events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.sessions[id]
	if !ok {
		return domain.NotFound("member session")
	}
	if m.EndedAt == nil {
		m.EndedAt = &now
		s.sessions[id] = m
		s.outbox.Add(ctx, evs...)
	}
	return nil
}

func cloneMemberChallenge(c domain.MemberChallenge) domain.MemberChallenge {
	c.Hash, c.UsedAt = bytes.Clone(c.Hash), timePtr(c.UsedAt)
	return c
}

// CreateMemberChallenge implements app.MemberSessions.
func (s *Store) CreateMemberChallenge(_ context.Context, c domain.MemberChallenge) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[c.AccountID]; !ok {
		return domain.NotFound("member account")
	}
	for id, old := range s.mchallenges {
		if old.ExpiresAt.Before(c.CreatedAt) {
			delete(s.mchallenges, id)
		}
	}
	s.mchallenges[c.ID] = cloneMemberChallenge(c)
	return nil
}

// GetMemberChallenge implements app.MemberSessions.
func (s *Store) GetMemberChallenge(_ context.Context, hash []byte) (domain.MemberChallenge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.mchallenges {
		if bytes.Equal(c.Hash, hash) {
			return cloneMemberChallenge(c), nil
		}
	}
	return domain.MemberChallenge{}, domain.NotFound("challenge")
}

// RecordMemberWrongCode implements app.MemberSessions.
func (s *Store) RecordMemberWrongCode(_ context.Context, id string, now time.Time) (domain.MemberChallenge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.mchallenges[id]
	if !ok || !c.Live(now) {
		return domain.MemberChallenge{}, domain.ErrChallengeSpent
	}
	c.WrongCodes++
	s.mchallenges[id] = c
	return cloneMemberChallenge(c), nil
}

// SpendMemberChallenge implements app.MemberSessions.
func (s *Store) SpendMemberChallenge(_ context.Context, id string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.mchallenges[id]
	if !ok || !c.Live(now) {
		return domain.ErrChallengeSpent
	}
	c.UsedAt = &now
	s.mchallenges[id] = c
	return nil
}

// memberFactor is the index in the account's factors of the one with id, or the TOTP factor
// when id is "", else -1. The caller holds the lock.
func (s *Store) memberFactor(accountID, id string) int {
	return slices.IndexFunc(s.mfactors[accountID], func(f domain.Factor) bool {
		return f.ID == id || id == "" && f.Kind == domain.FactorTOTP
	})
}

// SavePendingMemberFactor implements app.MemberFactors.
func (s *Store) SavePendingMemberFactor(_ context.Context, f domain.Factor) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[f.UserID]; !ok {
		return domain.NotFound("member account")
	}
	f.Kind, f.AppID, f.ConfirmedAt, f.LastUsedAt = domain.FactorTOTP, "", nil, nil
	factors := s.mfactors[f.UserID]
	if i := s.memberFactor(f.UserID, ""); i >= 0 {
		if factors[i].Confirmed() {
			return domain.ErrFactorEnrolled
		}
		factors = slices.Delete(slices.Clone(factors), i, i+1)
	}
	s.mfactors[f.UserID] = sortedFactors(append(factors, cloneFactor(f)))
	return nil
}

// sortedFactors orders an account's factors as ListMemberFactors answers them.
func sortedFactors(fs []domain.Factor) []domain.Factor {
	slices.SortFunc(fs, func(a, b domain.Factor) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return fs
}

// GetMemberFactor implements app.MemberFactors.
func (s *Store) GetMemberFactor(_ context.Context, accountID string) (domain.Factor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.memberFactor(accountID, "")
	if i < 0 {
		return domain.Factor{}, domain.NotFound("second factor")
	}
	return cloneFactor(s.mfactors[accountID][i]), nil
}

// ConfirmMemberFactor implements app.MemberFactors.
func (s *Store) ConfirmMemberFactor(_ context.Context, accountID, id string, step int64, now time.Time, codes []domain.RecoveryCode) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.memberFactor(accountID, "")
	if i < 0 || s.mfactors[accountID][i].ID != id || s.mfactors[accountID][i].Confirmed() {
		return domain.NotFound("second factor")
	}
	f := &s.mfactors[accountID][i]
	f.ConfirmedAt, f.LastStep = &now, step
	s.replaceMemberRecoveryCodes(accountID, codes)
	return nil
}

// replaceMemberRecoveryCodes makes codes the account's recovery codes. The caller holds the lock.
func (s *Store) replaceMemberRecoveryCodes(accountID string, codes []domain.RecoveryCode) {
	stored := make([]domain.RecoveryCode, 0, len(codes))
	for _, c := range codes {
		c.Hash, c.UsedAt = bytes.Clone(c.Hash), nil
		stored = append(stored, c)
	}
	s.mrecovery[accountID] = stored
}

// UseMemberFactorStep implements app.MemberFactors.
func (s *Store) UseMemberFactorStep(_ context.Context, accountID, id string, step int64, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.memberFactor(accountID, id)
	if id == "" || i < 0 || !s.mfactors[accountID][i].Confirmed() {
		return domain.NotFound("second factor")
	}
	f := &s.mfactors[accountID][i]
	if step <= f.LastStep && (step != 0 || f.LastStep != 0) {
		return domain.ErrCodeReplayed
	}
	f.LastStep, f.LastUsedAt = step, &now
	return nil
}

// UseMemberRecoveryCode implements app.MemberFactors.
func (s *Store) UseMemberRecoveryCode(_ context.Context, accountID string, hash []byte, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	codes := s.mrecovery[accountID]
	for i, c := range codes {
		if c.UsedAt == nil && bytes.Equal(c.Hash, hash) {
			codes[i].UsedAt = &now
			return nil
		}
	}
	return domain.NotFound("recovery code")
}

// ListMemberFactors implements app.MemberFactors.
func (s *Store) ListMemberFactors(_ context.Context, accountID string) ([]domain.Factor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]domain.Factor, 0, len(s.mfactors[accountID]))
	for _, f := range s.mfactors[accountID] {
		out = append(out, cloneFactor(f))
	}
	return out, nil
}

// confirmedMemberFactor reports whether the account holds a confirmed factor. The caller holds
// the lock.
func (s *Store) confirmedMemberFactor(accountID string) bool {
	return slices.ContainsFunc(s.mfactors[accountID], domain.Factor.Confirmed)
}

// AddMemberPasskey implements app.MemberFactors.
func (s *Store) AddMemberPasskey(_ context.Context, f domain.Factor, codes []domain.RecoveryCode) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[f.UserID]; !ok {
		return false, domain.NotFound("member account")
	}
	first := !s.confirmedMemberFactor(f.UserID)
	at := f.CreatedAt
	f.Kind, f.AppID, f.ConfirmedAt, f.LastUsedAt = domain.FactorPasskey, "", &at, nil
	s.mfactors[f.UserID] = sortedFactors(append(slices.Clone(s.mfactors[f.UserID]), cloneFactor(f)))
	if first {
		s.replaceMemberRecoveryCodes(f.UserID, codes)
	}
	return first, nil
}

// RemoveMemberFactor implements app.MemberFactors.
func (s *Store) RemoveMemberFactor(_ context.Context, accountID string, kind domain.FactorKind, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.memberFactor(accountID, id)
	if id == "" || i < 0 || s.mfactors[accountID][i].Kind != kind {
		return kind.NotFound()
	}
	s.mfactors[accountID] = slices.Delete(slices.Clone(s.mfactors[accountID]), i, i+1)
	if !s.confirmedMemberFactor(accountID) {
		delete(s.mrecovery, accountID)
	}
	return nil
}

// ListProjectApps implements app.ProjectApps.
func (s *Store) ListProjectApps(_ context.Context, projectID string) ([]domain.App, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.App{}
	for _, a := range s.apps {
		if a.ProjectID == projectID {
			out = append(out, cloneApp(a))
		}
	}
	slices.SortFunc(out, func(a, b domain.App) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// ListAppAPIKeys implements app.ProjectApps.
func (s *Store) ListAppAPIKeys(_ context.Context, appID string) ([]domain.APIKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.APIKey{}
	for _, k := range s.keys {
		if k.AppID == appID && k.RevokedAt == nil {
			k.Hash = bytes.Clone(k.Hash)
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b domain.APIKey) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// RevokeAPIKey implements app.ProjectApps.
func (s *Store) RevokeAPIKey(ctx context.Context, appID, id string, now time.Time, evs ...events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok || k.AppID != appID || k.RevokedAt != nil {
		return domain.NotFound("API key")
	}
	k.RevokedAt, k.UpdatedAt = &now, now
	s.keys[id] = k
	s.outbox.Add(ctx, evs...)
	return nil
}
