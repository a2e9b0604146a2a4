package postgres

import (
	"context"

	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// SearchUsers implements app.Users as one range scan of users_app_email_search (keyset.Search.SQL
// over its key expression).
func (s *Store) SearchUsers(ctx context.Context, appID string, q keyset.Search) ([]domain.User, error) {
	if !ids(appID) || (q.ID != "" && !ids(q.ID)) {
		return nil, nil
	}
	sql, args := searchUsersSQL(appID, q)
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// searchUsersSQL is the statement SearchUsers runs, with its arguments.
func searchUsersSQL(appID string, q keyset.Search) (string, []any) {
	cond, args := q.SQL(`lower(email) collate "C"`, []any{appID})
	return selectUsers + `where app_id = $1 and not deleted` + cond, args
}
