package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// utcPtr is utc for an optional time.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := utc(*t)
	return &u
}

const memberColumns = `id, project_id, email, name, created_at, account_id, accepted_at, language`

func scanMember(row pgx.Row) (domain.ProjectMember, error) {
	var (
		m       domain.ProjectMember
		account *string
	)
	if err := row.Scan(&m.ID, &m.ProjectID, &m.Email, &m.Name, &m.CreatedAt, &account, &m.AcceptedAt, &m.Language); err != nil {
		return domain.ProjectMember{}, noRow(err, "project member")
	}
	if account != nil {
		m.AccountID = *account
	}
	m.CreatedAt, m.AcceptedAt = utc(m.CreatedAt), utcPtr(m.AcceptedAt)
	return m, nil
}

func queryMembers(ctx context.Context, q pgxx.Querier, where string, arg string) ([]domain.ProjectMember, error) {
	rows, err := q.Query(ctx, `select `+memberColumns+` from project_members where `+where+` order by created_at, id`, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []domain.ProjectMember{}
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// InviteProjectMember implements app.MemberAccounts.
func (s *Store) InviteProjectMember(ctx context.Context, m domain.ProjectMember, inv domain.Invitation) error {
	if !ids(m.ProjectID) {
		return domain.NotFound("project")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `insert into project_members (id, project_id, email, name, created_at, language) values ($1, $2, $3, $4, $5, $6)`,
			m.ID, m.ProjectID, m.Email, m.Name, m.CreatedAt, m.Language)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation && pgErr.ConstraintName == "project_members_project_email" {
			return domain.ErrMemberTaken
		}
		if err != nil {
			return translate(err, "project")
		}
		_, err = tx.Exec(ctx, `insert into member_invitations (hash, member_id, project_id, email, created_at, expires_at) values ($1, $2, $3, $4, $5, $6)`,
			inv.Hash, inv.MemberID, inv.ProjectID, inv.Email, inv.CreatedAt, inv.ExpiresAt)
		return translate(err, "project member")
	})
}

func scanInvitation(row pgx.Row) (domain.Invitation, error) {
	var i domain.Invitation
	if err := row.Scan(&i.Hash, &i.MemberID, &i.ProjectID, &i.Email, &i.CreatedAt, &i.ExpiresAt, &i.UsedAt); err != nil {
		return domain.Invitation{}, noRow(err, "invitation")
	}
	i.CreatedAt, i.ExpiresAt, i.UsedAt = utc(i.CreatedAt), utc(i.ExpiresAt), utcPtr(i.UsedAt)
	return i, nil
}

const invitationColumns = `hash, member_id, project_id, email, created_at, expires_at, used_at`

// GetInvitation implements app.MemberAccounts.
func (s *Store) GetInvitation(ctx context.Context, hash []byte) (domain.Invitation, error) {
	return scanInvitation(pgxx.Q(ctx, s.pool).QueryRow(ctx, `select `+invitationColumns+` from member_invitations where hash = $1`, hash))
}

// AcceptInvitation implements app.MemberAccounts.
func (s *Store) AcceptInvitation(ctx context.Context, hash []byte, a domain.MemberAccount, now time.Time) (domain.ProjectMember, error) {
	var out domain.ProjectMember
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		inv, err := scanInvitation(tx.QueryRow(ctx, `select `+invitationColumns+` from member_invitations where hash = $1 for update`, hash))
		if errors.Is(err, domain.ErrNotFound) {
			return domain.ErrInvitationSpent
		}
		if err != nil {
			return err
		}
		if !inv.Live(now) {
			return domain.ErrInvitationSpent
		}
		_, err = tx.Exec(ctx, `insert into member_accounts (id, email, name, password_hash, created_at) values ($1, $2, $3, $4, $5)
			on conflict (id) do nothing`, a.ID, a.Email, a.Name, a.PasswordHash, a.CreatedAt)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation && pgErr.ConstraintName == "member_accounts_email" {
			return domain.ErrMemberAccountTaken
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `update member_invitations set used_at = $2 where hash = $1`, hash, now); err != nil {
			return err
		}
		out, err = scanMember(tx.QueryRow(ctx, `update project_members set account_id = $2, accepted_at = $3 where id = $1
			returning `+memberColumns, inv.MemberID, a.ID, now))
		return err
	})
	return out, err
}

const accountColumns = `id, email, name, password_hash, created_at`

func scanAccount(row pgx.Row) (domain.MemberAccount, error) {
	var a domain.MemberAccount
	if err := row.Scan(&a.ID, &a.Email, &a.Name, &a.PasswordHash, &a.CreatedAt); err != nil {
		return domain.MemberAccount{}, noRow(err, "member account")
	}
	a.CreatedAt = utc(a.CreatedAt)
	return a, nil
}

// GetMemberAccount implements app.MemberAccounts.
func (s *Store) GetMemberAccount(ctx context.Context, id string) (domain.MemberAccount, error) {
	if !ids(id) {
		return domain.MemberAccount{}, domain.NotFound("member account")
	}
	return scanAccount(pgxx.Q(ctx, s.pool).QueryRow(ctx, `select `+accountColumns+` from member_accounts where id = $1`, id))
}

// GetMemberAccountByEmail implements app.MemberAccounts.
func (s *Store) GetMemberAccountByEmail(ctx context.Context, email string) (domain.MemberAccount, error) {
	return scanAccount(pgxx.Q(ctx, s.pool).QueryRow(ctx, `select `+accountColumns+` from member_accounts where email = $1`,
		domain.NormalizeMemberEmail(email)))
}

// ListAccountMemberships implements app.MemberAccounts.
func (s *Store) ListAccountMemberships(ctx context.Context, accountID string) ([]domain.ProjectMember, error) {
	if !ids(accountID) {
		return []domain.ProjectMember{}, nil
	}
	return queryMembers(ctx, pgxx.Q(ctx, s.pool), `account_id = $1`, accountID)
}

// ListProjectMembers implements app.MemberAccounts.
func (s *Store) ListProjectMembers(ctx context.Context, projectID string) ([]domain.ProjectMember, error) {
	if !ids(projectID) {
		return []domain.ProjectMember{}, nil
	}
	return queryMembers(ctx, pgxx.Q(ctx, s.pool), `project_id = $1`, projectID)
}

const sessionColumns = `id, account_id, member_id, created_at, last_used_at, expires_at, ended_at, client_ip, user_agent`

// CreateMemberSession implements app.MemberSessions.
func (s *Store) CreateMemberSession(ctx context.Context, m domain.MemberSession) error {
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `insert into member_sessions (`+sessionColumns+`) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		m.ID, m.AccountID, m.MemberID, m.CreatedAt, m.LastUsedAt, m.ExpiresAt, m.EndedAt, m.ClientIP, m.UserAgent)
	return translate(err, "member account")
}

// GetMemberSession implements app.MemberSessions.
func (s *Store) GetMemberSession(ctx context.Context, id string) (domain.MemberSession, error) {
	if !ids(id) {
		return domain.MemberSession{}, domain.NotFound("member session")
	}
	var m domain.MemberSession
	err := pgxx.Q(ctx, s.pool).QueryRow(ctx, `select `+sessionColumns+` from member_sessions where id = $1`, id).
		Scan(&m.ID, &m.AccountID, &m.MemberID, &m.CreatedAt, &m.LastUsedAt, &m.ExpiresAt, &m.EndedAt, &m.ClientIP, &m.UserAgent)
	if err != nil {
		return domain.MemberSession{}, noRow(err, "member session")
	}
	m.CreatedAt, m.LastUsedAt, m.ExpiresAt, m.EndedAt = utc(m.CreatedAt), utc(m.LastUsedAt), utc(m.ExpiresAt), utcPtr(m.EndedAt)
	return m, nil
}

// TouchMemberSession implements app.MemberSessions.
func (s *Store) TouchMemberSession(ctx context.Context, id string, now time.Time) error {
	if !ids(id) {
		return domain.NotFound("member session")
	}
	var found bool
	err := pgxx.Q(ctx, s.pool).QueryRow(ctx, `with t as (update member_sessions set last_used_at = $2
			where id = $1 and ended_at is null and expires_at > $2 returning id)
		select exists (select 1 from member_sessions where id = $1)`, id, now).Scan(&found)
	if err != nil {
		return err
	}
	if !found {
		return domain.NotFound("member session")
	}
	return nil
}

// EndMemberSession implements app.MemberSessions.
func (s *Store) EndMemberSession(ctx context.Context, id string, now time.Time, evs ...events.Event) error {
	if !ids(id) {
		return domain.NotFound("member session")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		var ended bool
		err := tx.QueryRow(ctx, `with s as (select id, ended_at is null as live from member_sessions where id = $1 for update)
			update member_sessions m set ended_at = coalesce(m.ended_at, $2) from s where m.id = s.id returning s.live`, id, now).Scan(&ended)
		if err != nil {
			return noRow(err, "member session")
		}
		if !ended {
			return nil
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}

const challengeColumns = `id, hash, account_id, member_id, created_at, expires_at, used_at, wrong_codes`

func scanMemberChallenge(row pgx.Row) (domain.MemberChallenge, error) {
	var c domain.MemberChallenge
	if err := row.Scan(&c.ID, &c.Hash, &c.AccountID, &c.MemberID, &c.CreatedAt, &c.ExpiresAt, &c.UsedAt, &c.WrongCodes); err != nil {
		return domain.MemberChallenge{}, noRow(err, "challenge")
	}
	c.CreatedAt, c.ExpiresAt, c.UsedAt = utc(c.CreatedAt), utc(c.ExpiresAt), utcPtr(c.UsedAt)
	return c, nil
}

// CreateMemberChallenge implements app.MemberSessions.
func (s *Store) CreateMemberChallenge(ctx context.Context, c domain.MemberChallenge) error {
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `delete from member_challenges where expires_at < $1`, c.CreatedAt); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `insert into member_challenges (`+challengeColumns+`) values ($1, $2, $3, $4, $5, $6, $7, $8)`,
			c.ID, c.Hash, c.AccountID, c.MemberID, c.CreatedAt, c.ExpiresAt, c.UsedAt, c.WrongCodes)
		return translate(err, "member account")
	})
}

// GetMemberChallenge implements app.MemberSessions.
func (s *Store) GetMemberChallenge(ctx context.Context, hash []byte) (domain.MemberChallenge, error) {
	return scanMemberChallenge(pgxx.Q(ctx, s.pool).QueryRow(ctx, `select `+challengeColumns+` from member_challenges where hash = $1`, hash))
}

// liveChallenge is the condition of a challenge that may still take a code at $2 (domain.
// MemberChallenge.Live), $3 being domain.MaxCodeAttempts.
const liveChallenge = `used_at is null and expires_at > $2 and wrong_codes < $3`

// RecordMemberWrongCode implements app.MemberSessions.
func (s *Store) RecordMemberWrongCode(ctx context.Context, id string, now time.Time) (domain.MemberChallenge, error) {
	if !ids(id) {
		return domain.MemberChallenge{}, domain.ErrChallengeSpent
	}
	c, err := scanMemberChallenge(pgxx.Q(ctx, s.pool).QueryRow(ctx, `update member_challenges set wrong_codes = wrong_codes + 1
		where id = $1 and `+liveChallenge+` returning `+challengeColumns, id, now, domain.MaxCodeAttempts))
	if errors.Is(err, domain.ErrNotFound) {
		return domain.MemberChallenge{}, domain.ErrChallengeSpent
	}
	return c, err
}

// SpendMemberChallenge implements app.MemberSessions.
func (s *Store) SpendMemberChallenge(ctx context.Context, id string, now time.Time) error {
	if !ids(id) {
		return domain.ErrChallengeSpent
	}
	tag, err := pgxx.Q(ctx, s.pool).Exec(ctx, `update member_challenges set used_at = $2 where id = $1 and `+liveChallenge, id, now, domain.MaxCodeAttempts)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return domain.ErrChallengeSpent
	}
	return nil
}

const memberFactorColumns = `id, account_id, kind, sealed_secret, last_step, created_at, confirmed_at, name, last_used_at`

func scanMemberFactor(row pgx.Row) (domain.Factor, error) {
	var f domain.Factor
	err := row.Scan(&f.ID, &f.UserID, &f.Kind, &f.SealedSecret, &f.LastStep, &f.CreatedAt, &f.ConfirmedAt, &f.Name, &f.LastUsedAt)
	f.CreatedAt, f.ConfirmedAt, f.LastUsedAt = utc(f.CreatedAt), utcPtr(f.ConfirmedAt), utcPtr(f.LastUsedAt)
	return f, err
}

// lockMemberAccount locks the account's row, so the changes of its factors run one after the
// other and each sees the others' factors.
func lockMemberAccount(ctx context.Context, tx pgx.Tx, accountID string) error {
	var exists bool
	if err := tx.QueryRow(ctx, `select exists (select 1 from member_accounts where id = $1 for update)`, accountID).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return domain.NotFound("member account")
	}
	return nil
}

// SavePendingMemberFactor implements app.MemberFactors.
func (s *Store) SavePendingMemberFactor(ctx context.Context, f domain.Factor) error {
	if !ids(f.ID, f.UserID) {
		return domain.NotFound("member account")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if err := lockMemberAccount(ctx, tx, f.UserID); err != nil {
			return err
		}
		var confirmed bool
		err := tx.QueryRow(ctx, `select confirmed_at is not null from member_factors where account_id = $1 and kind = 'totp'`, f.UserID).Scan(&confirmed)
		switch {
		case err == nil && confirmed:
			return domain.ErrFactorEnrolled
		case err != nil && !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		if _, err := tx.Exec(ctx, `delete from member_factors where account_id = $1 and kind = 'totp'`, f.UserID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `insert into member_factors (`+memberFactorColumns+`) values ($1, $2, 'totp', $3, $4, $5, null, '', null)`,
			f.ID, f.UserID, f.SealedSecret, f.LastStep, f.CreatedAt)
		return translate(err, "member account")
	})
}

// GetMemberFactor implements app.MemberFactors.
func (s *Store) GetMemberFactor(ctx context.Context, accountID string) (domain.Factor, error) {
	if !ids(accountID) {
		return domain.Factor{}, domain.NotFound("second factor")
	}
	f, err := scanMemberFactor(pgxx.Q(ctx, s.pool).QueryRow(ctx, `select `+memberFactorColumns+` from member_factors where account_id = $1 and kind = 'totp'`, accountID))
	if err != nil {
		return domain.Factor{}, noRow(err, "second factor")
	}
	return f, nil
}

// ConfirmMemberFactor implements app.MemberFactors.
func (s *Store) ConfirmMemberFactor(ctx context.Context, accountID, id string, step int64, now time.Time, codes []domain.RecoveryCode) error {
	if !ids(accountID, id) {
		return domain.NotFound("second factor")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `update member_factors set confirmed_at = $3, last_step = $4
			where id = $1 and account_id = $2 and kind = 'totp' and confirmed_at is null`, id, accountID, now, step)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return domain.NotFound("second factor")
		}
		return replaceMemberRecoveryCodes(ctx, tx, accountID, codes)
	})
}

// replaceMemberRecoveryCodes makes codes the account's recovery codes.
func replaceMemberRecoveryCodes(ctx context.Context, tx pgx.Tx, accountID string, codes []domain.RecoveryCode) error {
	if _, err := tx.Exec(ctx, `delete from member_recovery_codes where account_id = $1`, accountID); err != nil {
		return err
	}
	for _, c := range codes {
		if _, err := tx.Exec(ctx, `insert into member_recovery_codes (account_id, hash, created_at) values ($1, $2, $3)`,
			accountID, c.Hash, c.CreatedAt); err != nil {
			return err
		}
	}
	return nil
}

// UseMemberFactorStep implements app.MemberFactors.
func (s *Store) UseMemberFactorStep(ctx context.Context, accountID, id string, step int64, now time.Time) error {
	if !ids(accountID, id) {
		return domain.NotFound("second factor")
	}
	var used bool
	err := pgxx.Q(ctx, s.pool).QueryRow(ctx, `with f as (select id from member_factors
			where id = $1 and account_id = $2 and confirmed_at is not null for update),
		u as (update member_factors set last_step = $3, last_used_at = $4 where id in (select id from f)
			and (last_step < $3 or last_step = 0 and $3 = 0) returning id)
		select exists (select 1 from u) from f`, id, accountID, step, now).Scan(&used)
	if err != nil {
		return noRow(err, "second factor")
	}
	if !used {
		return domain.ErrCodeReplayed
	}
	return nil
}

// UseMemberRecoveryCode implements app.MemberFactors.
func (s *Store) UseMemberRecoveryCode(ctx context.Context, accountID string, hash []byte, now time.Time) error {
	if !ids(accountID) {
		return domain.NotFound("recovery code")
	}
	tag, err := pgxx.Q(ctx, s.pool).Exec(ctx, `update member_recovery_codes set used_at = $3
		where account_id = $1 and hash = $2 and used_at is null`, accountID, hash, now)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return domain.NotFound("recovery code")
	}
	return nil
}

// ListMemberFactors implements app.MemberFactors.
func (s *Store) ListMemberFactors(ctx context.Context, accountID string) ([]domain.Factor, error) {
	if !ids(accountID) {
		return []domain.Factor{}, nil
	}
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx, `select `+memberFactorColumns+` from member_factors
		where account_id = $1 order by created_at, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list member factors: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.Factor, error) { return scanMemberFactor(row) })
	if err != nil {
		return nil, fmt.Errorf("list member factors: %w", err)
	}
	return out, nil
}

// confirmedMemberFactor reports whether the account holds a confirmed factor.
func confirmedMemberFactor(ctx context.Context, tx pgx.Tx, accountID string) (bool, error) {
	var held bool
	err := tx.QueryRow(ctx, `select exists (select 1 from member_factors where account_id = $1 and confirmed_at is not null)`, accountID).Scan(&held)
	return held, err
}

// AddMemberPasskey implements app.MemberFactors.
func (s *Store) AddMemberPasskey(ctx context.Context, f domain.Factor, codes []domain.RecoveryCode) (bool, error) {
	if !ids(f.ID, f.UserID) {
		return false, domain.NotFound("member account")
	}
	var first bool
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if err := lockMemberAccount(ctx, tx, f.UserID); err != nil {
			return err
		}
		held, err := confirmedMemberFactor(ctx, tx, f.UserID)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `insert into member_factors (`+memberFactorColumns+`) values ($1, $2, 'passkey', $3, $4, $5, $5, $6, null)`,
			f.ID, f.UserID, f.SealedSecret, f.LastStep, f.CreatedAt, f.Name); err != nil {
			return err
		}
		if first = !held; first {
			return replaceMemberRecoveryCodes(ctx, tx, f.UserID, codes)
		}
		return nil
	})
	return first, err
}

// RemoveMemberFactor implements app.MemberFactors.
func (s *Store) RemoveMemberFactor(ctx context.Context, accountID string, kind domain.FactorKind, id string) error {
	if !ids(accountID, id) {
		return kind.NotFound()
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if err := lockMemberAccount(ctx, tx, accountID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `delete from member_factors where id = $1 and account_id = $2 and kind = $3`, id, accountID, string(kind))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return kind.NotFound()
		}
		held, err := confirmedMemberFactor(ctx, tx, accountID)
		if err != nil || held {
			return err
		}
		_, err = tx.Exec(ctx, `delete from member_recovery_codes where account_id = $1`, accountID)
		return err
	})
}

// ListProjectApps implements app.ProjectApps.
func (s *Store) ListProjectApps(ctx context.Context, projectID string) ([]domain.App, error) {
	if !ids(projectID) {
		return []domain.App{}, nil
	}
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx, `select `+appColumns+` from apps where project_id = $1 order by created_at, id`, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []domain.App{}
	for rows.Next() {
		a, err := scanApp(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// ListAppAPIKeys implements app.ProjectApps.
func (s *Store) ListAppAPIKeys(ctx context.Context, appID string) ([]domain.APIKey, error) {
	if !ids(appID) {
		return []domain.APIKey{}, nil
	}
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx, `select `+apiKeyColumns+` from api_keys
		where app_id = $1 and revoked_at is null order by created_at, id`, appID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []domain.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokeAPIKey implements app.ProjectApps.
func (s *Store) RevokeAPIKey(ctx context.Context, appID, id string, now time.Time, evs ...events.Event) error {
	if !ids(appID) {
		return domain.NotFound("API key")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `update api_keys set revoked_at = $3, updated_at = $3
			where id = $1 and app_id = $2 and revoked_at is null`, id, appID, now)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return domain.NotFound("API key")
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}
