package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

const providerColumns = `app_id, slot, display_name, discovery_url, issuer, auth_url, token_url, userinfo_url, jwks_url,
	client_id, sealed_secret, scopes, allowed_domains, created_at, updated_at`

func scanProvider(row pgx.Row) (domain.IdentityProvider, error) {
	var p domain.IdentityProvider
	err := row.Scan(&p.AppID, &p.Slot, &p.DisplayName, &p.DiscoveryURL, &p.Issuer, &p.AuthURL, &p.TokenURL, &p.UserinfoURL,
		&p.JWKSURL, &p.ClientID, &p.SealedSecret, &p.Scopes, &p.AllowedDomains, &p.CreatedAt, &p.UpdatedAt)
	p.CreatedAt, p.UpdatedAt = utc(p.CreatedAt), utc(p.UpdatedAt)
	return p, err
}

// PutIdentityProvider implements app.IdentityProviders.
func (s *Store) PutIdentityProvider(ctx context.Context, p domain.IdentityProvider) error {
	if !ids(p.AppID) {
		return domain.NotFound("app")
	}
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `insert into identity_providers (`+providerColumns+`)
		values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		on conflict (app_id, slot) do update set display_name = excluded.display_name, discovery_url = excluded.discovery_url,
			issuer = excluded.issuer, auth_url = excluded.auth_url, token_url = excluded.token_url,
			userinfo_url = excluded.userinfo_url, jwks_url = excluded.jwks_url, client_id = excluded.client_id,
			sealed_secret = excluded.sealed_secret, scopes = excluded.scopes, allowed_domains = excluded.allowed_domains,
			updated_at = excluded.updated_at`,
		p.AppID, p.Slot, p.DisplayName, p.DiscoveryURL, p.Issuer, p.AuthURL, p.TokenURL, p.UserinfoURL, p.JWKSURL,
		p.ClientID, p.SealedSecret, nonNil(p.Scopes), nonNil(p.AllowedDomains), p.CreatedAt, p.UpdatedAt)
	return translate(err, "app")
}

// GetIdentityProvider implements app.IdentityProviders.
func (s *Store) GetIdentityProvider(ctx context.Context, appID, slot string) (domain.IdentityProvider, error) {
	if !ids(appID) {
		return domain.IdentityProvider{}, domain.NotFound("identity provider")
	}
	p, err := scanProvider(pgxx.Q(ctx, s.pool).QueryRow(ctx,
		`select `+providerColumns+` from identity_providers where app_id = $1 and slot = $2`, appID, slot))
	return emptyLists(p), noRow(err, "identity provider")
}

// emptyLists reads empty arrays back as nil, as the memory store keeps them.
func emptyLists(p domain.IdentityProvider) domain.IdentityProvider {
	if len(p.Scopes) == 0 {
		p.Scopes = nil
	}
	if len(p.AllowedDomains) == 0 {
		p.AllowedDomains = nil
	}
	return p
}

// ListIdentityProviders implements app.IdentityProviders (slot names sort in slot order).
func (s *Store) ListIdentityProviders(ctx context.Context, appID string) ([]domain.IdentityProvider, error) {
	if !ids(appID) {
		return nil, nil
	}
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx,
		`select `+providerColumns+` from identity_providers where app_id = $1 order by slot`, appID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.IdentityProvider
	for rows.Next() {
		p, err := scanProvider(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, emptyLists(p))
	}
	return out, rows.Err()
}

// DeleteIdentityProvider implements app.IdentityProviders.
func (s *Store) DeleteIdentityProvider(ctx context.Context, appID, slot string) error {
	if !ids(appID) {
		return nil
	}
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx, `delete from identity_providers where app_id = $1 and slot = $2`, appID, slot)
	return err
}

// insertLink inserts a link whose user is a user of the link's app; no row is inserted otherwise.
const insertLink = `insert into provider_links (app_id, slot, subject, user_id, email, created_at)
	select $1, $2, $3, id, $5, $6 from users where id = $4 and app_id = $1`

func linkArgs(l domain.ProviderLink) []any {
	return []any{l.AppID, l.Slot, l.Subject, l.UserID, l.Email, l.CreatedAt}
}

// CreateProviderLink implements app.ProviderLinks.
func (s *Store) CreateProviderLink(ctx context.Context, l domain.ProviderLink, evs ...events.Event) error {
	if !ids(l.AppID, l.UserID) {
		return domain.NotFound("user")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, insertLink, linkArgs(l)...)
		if err != nil {
			return translate(err, "user")
		}
		if tag.RowsAffected() == 0 {
			return domain.NotFound("user")
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}

// CreateLinkedUser implements app.ProviderLinks.
func (s *Store) CreateLinkedUser(ctx context.Context, u domain.User, l domain.ProviderLink, evs ...events.Event) error {
	if !ids(u.AppID) {
		return domain.NotFound("app")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insertUser, userFields(&u)...); err != nil {
			return translate(err, "app")
		}
		if _, err := tx.Exec(ctx, insertLink, linkArgs(l)...); err != nil {
			return translate(err, "user")
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}

const linkColumns = `app_id, slot, subject, user_id, email, created_at`

func scanLink(row pgx.Row) (domain.ProviderLink, error) {
	var l domain.ProviderLink
	err := row.Scan(&l.AppID, &l.Slot, &l.Subject, &l.UserID, &l.Email, &l.CreatedAt)
	l.CreatedAt = utc(l.CreatedAt)
	return l, err
}

// GetProviderLink implements app.ProviderLinks.
func (s *Store) GetProviderLink(ctx context.Context, appID, slot, subject string) (domain.ProviderLink, error) {
	if !ids(appID) {
		return domain.ProviderLink{}, domain.NotFound("provider link")
	}
	l, err := scanLink(pgxx.Q(ctx, s.pool).QueryRow(ctx,
		`select `+linkColumns+` from provider_links where app_id = $1 and slot = $2 and subject = $3`, appID, slot, subject))
	return l, noRow(err, "provider link")
}

// ListProviderLinks implements app.ProviderLinks.
func (s *Store) ListProviderLinks(ctx context.Context, appID, userID string) ([]domain.ProviderLink, error) {
	if !ids(appID, userID) {
		return nil, nil
	}
	return listLinks(ctx, pgxx.Q(ctx, s.pool), appID, userID)
}

// listLinks reads the user's links in slot order.
func listLinks(ctx context.Context, q pgxx.Querier, appID, userID string) ([]domain.ProviderLink, error) {
	rows, err := q.Query(ctx,
		`select `+linkColumns+` from provider_links where app_id = $1 and user_id = $2 order by slot`, appID, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.ProviderLink
	for rows.Next() {
		l, err := scanLink(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}
