package postgres

import (
	"context"
	"fmt"

	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/tenant/internal/domain"
)

// selectTenants reads tenants without their addresses (a search's lines show none); ids as text,
// as selectTenant reads them. The id's text is named apart from the column: ORDER BY would take an
// output column named id for the uuid column and sort the text, which the index cannot give.
var selectTenants = "SELECT " + joinColumns(func(c tenantColumn) string {
	if c.name == "id" || c.name == "app_id" {
		return c.name + "::text AS text_" + c.name
	}
	return c.name
}) + " FROM tenants WHERE app_id = $1 AND NOT deleted"

// SearchTenants implements app.Store as one range scan of tenants_app_name_search
// (keyset.Search.SQL over its key expression).
func (s *Store) SearchTenants(ctx context.Context, appID string, q keyset.Search) ([]domain.Tenant, error) {
	if !domain.IsUUID(appID) || (q.ID != "" && !domain.IsUUID(q.ID)) {
		return nil, nil
	}
	sql, args := searchTenantsSQL(appID, q)
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("search tenants: %w", err)
	}
	defer rows.Close()
	var out []domain.Tenant
	for rows.Next() {
		var t domain.Tenant
		if err := rows.Scan(values(&t, tenantColumns)...); err != nil {
			return nil, fmt.Errorf("scan tenant: %w", err)
		}
		t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read tenants: %w", err)
	}
	return out, nil
}

// searchTenantsSQL is the statement SearchTenants runs, with its arguments.
func searchTenantsSQL(appID string, q keyset.Search) (string, []any) {
	cond, args := q.SQL(`lower(name) collate "C"`, []any{appID})
	return selectTenants + cond, args
}
