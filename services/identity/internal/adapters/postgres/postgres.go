package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Component is this schema's name in schema_migrations.
const Component = "identity"

// Migrate applies the identity schema, the shared outbox/inbox schema and the key checks (pgxx.KeyCheckSet) to pool's database.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgxx.MigrateSets(ctx, pool, pgxx.Set{Component: Component, Files: migrationFiles, Dir: "migrations"},
		pgxx.Set{Component: "events", Files: events.Migrations}, pgxx.KeyCheckSet)
}

// Store implements app.Store.
type Store struct {
	pool *pgxpool.Pool
}

var _ app.Store = (*Store)(nil)

// New returns a store on a migrated database.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Postgres error codes this adapter translates.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

// translate maps constraint violations to the ports' errors: a missing parent row is "not found",
// a second user with the same email is domain.ErrEmailTaken, a second role of the same name
// domain.ErrRoleTaken, a provider identity or a user's slot linked twice domain.ErrProviderLinked.
func translate(err error, parent string) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == uniqueViolation && pgErr.ConstraintName == "users_app_email":
			return domain.ErrEmailTaken
		case pgErr.Code == uniqueViolation && pgErr.ConstraintName == "user_roles_app_name":
			return domain.ErrRoleTaken
		case pgErr.Code == uniqueViolation && (pgErr.ConstraintName == "provider_links_pkey" || pgErr.ConstraintName == "provider_links_user_slot"):
			return domain.ErrProviderLinked
		case pgErr.Code == foreignKeyViolation:
			return domain.NotFound(parent)
		}
	}
	return err
}

// noRow turns pgx.ErrNoRows into a not-found error naming what was looked up.
func noRow(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.NotFound(what)
	}
	return err
}

// ids reports whether every id is a UUID. Lookups with anything else cannot match and would fail
// the uuid cast, so they answer "not found" without a query.
func ids(values ...string) bool {
	for _, v := range values {
		if !domain.IsUUID(v) {
			return false
		}
	}
	return true
}

func utc(t time.Time) time.Time { return t.UTC() }

// CreateProject implements app.Projects.
func (s *Store) CreateProject(ctx context.Context, p domain.Project) error {
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx,
		`insert into projects (id, name, created_at) values ($1, $2, $3)`, p.ID, p.Name, p.CreatedAt)
	return err
}

// GetProject implements app.Projects.
func (s *Store) GetProject(ctx context.Context, id string) (domain.Project, error) {
	if !ids(id) {
		return domain.Project{}, domain.NotFound("project")
	}
	var p domain.Project
	err := pgxx.Q(ctx, s.pool).QueryRow(ctx, `select id, name, created_at from projects where id = $1`, id).
		Scan(&p.ID, &p.Name, &p.CreatedAt)
	p.CreatedAt = utc(p.CreatedAt)
	return p, noRow(err, "project")
}

const appColumns = `id, project_id, name, enabled, redirect_uris, public_key_pem, sealed_private_key, created_at, updated_at,
	access_token_ttl_seconds, refresh_token_ttl_seconds, extra_origins, display_name, accent_color, logo_url, default_language,
	email_verification, mfa_policy, passkey_sign_in`

// appValues lists a's columns in appColumns order for insert and update.
func appValues(a domain.App) []any {
	return []any{a.ID, a.ProjectID, a.Name, a.Enabled, a.RedirectURIs, a.PublicKeyPEM, a.SealedPrivateKey, a.CreatedAt, a.UpdatedAt,
		int64(a.AccessTokenTTL / time.Second), int64(a.RefreshTokenTTL / time.Second), nonNil(a.ExtraOrigins),
		a.Branding.DisplayName, a.Branding.AccentColor, a.Branding.LogoURL, a.Branding.DefaultLanguage, string(a.EmailVerification), string(a.MFA), a.PasskeySignIn}
}

func scanApp(row pgx.Row) (domain.App, error) {
	var (
		a               domain.App
		access, refresh int64
	)
	if err := row.Scan(&a.ID, &a.ProjectID, &a.Name, &a.Enabled, &a.RedirectURIs, &a.PublicKeyPEM, &a.SealedPrivateKey,
		&a.CreatedAt, &a.UpdatedAt, &access, &refresh, &a.ExtraOrigins,
		&a.Branding.DisplayName, &a.Branding.AccentColor, &a.Branding.LogoURL, &a.Branding.DefaultLanguage, &a.EmailVerification, &a.MFA, &a.PasskeySignIn); err != nil {
		return domain.App{}, noRow(err, "app")
	}
	a.AccessTokenTTL, a.RefreshTokenTTL = time.Duration(access)*time.Second, time.Duration(refresh)*time.Second
	a.CreatedAt, a.UpdatedAt = utc(a.CreatedAt), utc(a.UpdatedAt)
	a.RedirectURIs, a.ExtraOrigins = nonNil(a.RedirectURIs), nonNil(a.ExtraOrigins)
	return a, nil
}

// nonNil stores and returns an empty list for a missing one (the columns are not null).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// CreateApp implements app.Apps.
func (s *Store) CreateApp(ctx context.Context, a domain.App) error {
	if !ids(a.ProjectID) {
		return domain.NotFound("project")
	}
	if a.RedirectURIs == nil {
		a.RedirectURIs = []string{}
	}
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx,
		`insert into apps (`+appColumns+`) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`, appValues(a)...)
	return translate(err, "project")
}

// GetApp implements app.Apps.
func (s *Store) GetApp(ctx context.Context, id string) (domain.App, error) {
	if !ids(id) {
		return domain.App{}, domain.NotFound("app")
	}
	return scanApp(pgxx.Q(ctx, s.pool).QueryRow(ctx, `select `+appColumns+` from apps where id = $1`, id))
}

// ListApps implements app.Apps.
func (s *Store) ListApps(ctx context.Context) ([]domain.App, error) {
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx, `select `+appColumns+` from apps order by id`)
	if err != nil {
		return nil, fmt.Errorf("list apps: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.App, error) { return scanApp(row) })
}

// UpdateApp implements app.Apps.
func (s *Store) UpdateApp(ctx context.Context, id string, fn func(*domain.App) ([]events.Event, error)) (domain.App, error) {
	if !ids(id) {
		return domain.App{}, domain.NotFound("app")
	}
	var out domain.App
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		a, evs, err := updateApp(ctx, tx, id, fn)
		if err != nil {
			return err
		}
		out = a
		return events.InsertOutbox(ctx, tx, evs...)
	})
	if err != nil {
		return domain.App{}, err
	}
	return out, nil
}

// updateApp locks the app row for tx, runs fn on it and writes the result; the caller commits fn's
// events with the rest of its change.
func updateApp(ctx context.Context, tx pgx.Tx, id string, fn func(*domain.App) ([]events.Event, error)) (domain.App, []events.Event, error) {
	a, err := scanApp(tx.QueryRow(ctx, `select `+appColumns+` from apps where id = $1 for update`, id))
	if err != nil {
		return domain.App{}, nil, err
	}
	evs, err := fn(&a)
	if err != nil {
		return domain.App{}, nil, err
	}
	a.ID = id // the id is the key; fn cannot move the row
	if _, err := tx.Exec(ctx, `update apps set project_id = $2, name = $3, enabled = $4, redirect_uris = $5,
		public_key_pem = $6, sealed_private_key = $7, created_at = $8, updated_at = $9,
		access_token_ttl_seconds = $10, refresh_token_ttl_seconds = $11, extra_origins = $12,
		display_name = $13, accent_color = $14, logo_url = $15, default_language = $16,
		email_verification = $17, mfa_policy = $18, passkey_sign_in = $19 where id = $1`,
		appValues(a)...); err != nil {
		return domain.App{}, nil, err
	}
	return a, evs, nil
}

// CreateAPIKey implements app.APIKeys.
func (s *Store) CreateAPIKey(ctx context.Context, k domain.APIKey, evs ...events.Event) error {
	if !ids(k.AppID) {
		return domain.NotFound("app")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `insert into api_keys (id, app_id, type, name, description, hash, created_at, updated_at)
			values ($1, $2, $3, $4, $5, $6, $7, $8)`,
			k.ID, k.AppID, string(k.Type), k.Name, k.Description, k.Hash, k.CreatedAt, k.UpdatedAt); err != nil {
			return translate(err, "app")
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}

const apiKeyColumns = `id, app_id, type, name, description, hash, created_at, updated_at, revoked_at`

func scanAPIKey(row pgx.Row) (domain.APIKey, error) {
	var (
		k   domain.APIKey
		typ string
	)
	if err := row.Scan(&k.ID, &k.AppID, &typ, &k.Name, &k.Description, &k.Hash, &k.CreatedAt, &k.UpdatedAt, &k.RevokedAt); err != nil {
		return domain.APIKey{}, noRow(err, "API key")
	}
	k.Type, k.CreatedAt, k.UpdatedAt, k.RevokedAt = domain.KeyType(typ), utc(k.CreatedAt), utc(k.UpdatedAt), utcPtr(k.RevokedAt)
	return k, nil
}

// GetAPIKey implements app.APIKeys.
func (s *Store) GetAPIKey(ctx context.Context, id string) (domain.APIKey, error) {
	return scanAPIKey(pgxx.Q(ctx, s.pool).QueryRow(ctx, `select `+apiKeyColumns+` from api_keys where id = $1`, id))
}

// CreateRole implements app.Roles.
func (s *Store) CreateRole(ctx context.Context, r domain.UserRole) error {
	if !ids(r.AppID) {
		return domain.NotFound("app")
	}
	_, err := pgxx.Q(ctx, s.pool).Exec(ctx,
		`insert into user_roles (id, app_id, name, created_at) values ($1, $2, $3, $4)`, r.ID, r.AppID, r.Name, r.CreatedAt)
	return translate(err, "app")
}

// ListRoles implements app.Roles. Names sort bytewise (collate "C") so the order does not depend on
// the server's locale and matches the memory adapter.
func (s *Store) ListRoles(ctx context.Context, appID string) ([]domain.UserRole, error) {
	if !ids(appID) {
		return nil, nil
	}
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx,
		`select id, app_id, name, created_at from user_roles where app_id = $1 order by name collate "C", id`, appID)
	if err != nil {
		return nil, fmt.Errorf("list roles: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.UserRole, error) {
		var r domain.UserRole
		err := row.Scan(&r.ID, &r.AppID, &r.Name, &r.CreatedAt)
		r.CreatedAt = utc(r.CreatedAt)
		return r, err
	})
}
