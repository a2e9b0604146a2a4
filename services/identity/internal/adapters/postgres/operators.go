package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// UpdateAPIKey implements app.APIKeys. Only name, description and updated_at are written: the id,
// app, type and hash of a key never change.
func (s *Store) UpdateAPIKey(ctx context.Context, id string, fn func(*domain.APIKey) ([]events.Event, error)) (domain.APIKey, error) {
	var out domain.APIKey
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		k, err := scanAPIKey(tx.QueryRow(ctx, `select `+apiKeyColumns+` from api_keys where id = $1 for update`, id))
		if err != nil {
			return err
		}
		next := k
		evs, err := fn(&next)
		if err != nil {
			return err
		}
		k.Name, k.Description, k.UpdatedAt = next.Name, next.Description, next.UpdatedAt
		if _, err := tx.Exec(ctx, `update api_keys set name = $2, description = $3, updated_at = $4 where id = $1`,
			id, k.Name, k.Description, k.UpdatedAt); err != nil {
			return err
		}
		out = k
		return events.InsertOutbox(ctx, tx, evs...)
	})
	if err != nil {
		return domain.APIKey{}, err
	}
	return out, nil
}

// AddProjectMember implements app.ProjectMembers.
func (s *Store) AddProjectMember(ctx context.Context, m domain.ProjectMember) error {
	if !ids(m.ProjectID) {
		return domain.NotFound("project")
	}
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx,
		`insert into project_members (id, project_id, email, name, created_at, language) values ($1, $2, $3, $4, $5, $6)`,
		m.ID, m.ProjectID, m.Email, m.Name, m.CreatedAt, m.Language)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation && pgErr.ConstraintName == "project_members_project_email" {
		return domain.ErrMemberTaken
	}
	return translate(err, "project")
}

// GetProjectMember implements app.ProjectMembers.
func (s *Store) GetProjectMember(ctx context.Context, id string) (domain.ProjectMember, error) {
	if !ids(id) {
		return domain.ProjectMember{}, domain.NotFound("project member")
	}
	return scanMember(pgxx.Q(ctx, s.pool).QueryRow(ctx, `select `+memberColumns+` from project_members where id = $1`, id))
}

// GetOperatorKey implements app.OperatorKeys.
func (s *Store) GetOperatorKey(ctx context.Context) ([]byte, error) {
	var sealed []byte
	err := pgxx.Q(ctx, s.pool).QueryRow(ctx, `select sealed_private_key from operator_keys where id = 1`).Scan(&sealed)
	return sealed, noRow(err, "operator key")
}

// CreateOperatorKey implements app.OperatorKeys: the insert yields to an existing row, and the
// select that follows reads whichever key won.
func (s *Store) CreateOperatorKey(ctx context.Context, sealed []byte) ([]byte, error) {
	if _, err := pgxx.Q(ctx, s.pool).Exec(ctx,
		`insert into operator_keys (id, sealed_private_key) values (1, $1) on conflict (id) do nothing`, sealed); err != nil {
		return nil, err
	}
	return s.GetOperatorKey(ctx)
}
