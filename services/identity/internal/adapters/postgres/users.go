package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// userColumns and userFields list the users table in one order; they serve select, insert and
// update alike, so a column cannot be read but not written.
var userColumns = []string{
	"id", "app_id", "tenant_id", "language", "salutation", "salutation_other", "accepted_newsletter",
	"accepted_newsletter_date", "last_asked_newsletter_sign_up", "newsletter_member_id", "name", "given_name",
	"family_name", "middle_name", "nickname", "preferred_username", "profile", "picture", "website", "email",
	"email_verified", "gender", "other_gender", "birthdate", "zoneinfo", "locale", "phone_number",
	"phone_number_verified", "frozen", "deleted", "verified_by_admin", "idp_a_email_verified",
	"idp_b_email_verified", "idp_c_email_verified", "idp_d_email_verified", "last_sign_in_at",
	"last_sign_in_ip", "created_at", "updated_at", "password_hash", "referred_by",
}

func userFields(u *domain.User) []any {
	return []any{
		&u.ID, &u.AppID, &u.TenantID, &u.Language, &u.Salutation, &u.SalutationOther, &u.AcceptedNewsletter,
		&u.AcceptedNewsletterDate, &u.LastAskedNewsletterSignUp, &u.NewsletterMemberID, &u.Name, &u.GivenName,
		&u.FamilyName, &u.MiddleName, &u.Nickname, &u.PreferredUsername, &u.Profile, &u.Picture, &u.Website, &u.Email,
		&u.EmailVerified, &u.Gender, &u.OtherGender, &u.Birthdate, &u.Zoneinfo, &u.Locale, &u.PhoneNumber,
		&u.PhoneNumberVerified, &u.Frozen, &u.Deleted, &u.VerifiedByAdmin, &u.IdpAEmailVerified,
		&u.IdpBEmailVerified, &u.IdpCEmailVerified, &u.IdpDEmailVerified, &u.LastSignInAt,
		&u.LastSignInIP, &u.CreatedAt, &u.UpdatedAt, &u.PasswordHash, &u.ReferredBy,
	}
}

// Statements built once from the column list.
var (
	selectUsers = `select ` + strings.Join(userColumns, ", ") + ` from users `
	insertUser  = func() string {
		ph := make([]string, len(userColumns))
		for i := range ph {
			ph[i] = fmt.Sprintf("$%d", i+1)
		}
		return `insert into users (` + strings.Join(userColumns, ", ") + `) values (` + strings.Join(ph, ", ") + `)`
	}()
	// updateUser sets every column but id ($1) and app_id ($2), which identify the row.
	updateUser = func() string {
		set := make([]string, 0, len(userColumns)-2)
		for i, c := range userColumns[2:] {
			set = append(set, fmt.Sprintf("%s = $%d", c, i+3))
		}
		return `update users set ` + strings.Join(set, ", ") + ` where id = $1 and app_id = $2`
	}()
)

func scanUser(row pgx.Row) (domain.User, error) {
	var u domain.User
	if err := row.Scan(userFields(&u)...); err != nil {
		return domain.User{}, noRow(err, "user")
	}
	u.CreatedAt, u.UpdatedAt = utc(u.CreatedAt), utc(u.UpdatedAt)
	if u.LastSignInAt != nil {
		t := utc(*u.LastSignInAt)
		u.LastSignInAt = &t
	}
	return u, nil
}

// CreateUser implements app.Users.
func (s *Store) CreateUser(ctx context.Context, u domain.User, evs ...events.Event) error {
	if !ids(u.AppID) {
		return domain.NotFound("app")
	}
	return pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, insertUser, userFields(&u)...); err != nil {
			return translate(err, "app")
		}
		return events.InsertOutbox(ctx, tx, evs...)
	})
}

// GetUser implements app.Users.
func (s *Store) GetUser(ctx context.Context, appID, userID string) (domain.User, error) {
	if !ids(appID, userID) {
		return domain.User{}, domain.NotFound("user")
	}
	return scanUser(pgxx.Q(ctx, s.pool).QueryRow(ctx, selectUsers+`where app_id = $1 and id = $2`, appID, userID))
}

// GetUserByEmail implements app.Users (served by the users_app_email_all index).
func (s *Store) GetUserByEmail(ctx context.Context, appID, email string) (domain.User, error) {
	if !ids(appID) {
		return domain.User{}, domain.NotFound("user")
	}
	return scanUser(pgxx.Q(ctx, s.pool).QueryRow(ctx,
		selectUsers+`where app_id = $1 and lower(email) = lower($2) order by deleted, updated_at desc, id limit 1`, appID, email))
}

// DeleteUser implements app.Users. The tenant's live users are locked in id order before the user
// itself, so concurrent deletions in one tenant queue up instead of deadlocking, and each counts
// the users the other left.
func (s *Store) DeleteUser(ctx context.Context, appID, userID string, now time.Time, fn func(domain.User, int) ([]events.Event, error)) (domain.User, error) {
	if !ids(appID, userID) {
		return domain.User{}, domain.NotFound("user")
	}
	var out domain.User
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		// A user's tenant never changes, so reading it before taking the locks is safe.
		var tenantID string
		if err := tx.QueryRow(ctx, `select tenant_id from users where app_id = $1 and id = $2`, appID, userID).Scan(&tenantID); err != nil {
			return noRow(err, "user")
		}
		left := 0
		if tenantID != "" {
			rows, err := tx.Query(ctx, `select id from users where app_id = $1 and tenant_id = $2 and not deleted
				order by id for update`, appID, tenantID)
			if err != nil {
				return err
			}
			live, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			for _, id := range live {
				if id != userID {
					left++
				}
			}
		}
		u, err := scanUser(tx.QueryRow(ctx, selectUsers+`where app_id = $1 and id = $2 for update`, appID, userID))
		if err != nil {
			return err
		}
		if err := u.MarkDeleted(now); err != nil {
			return err
		}
		evs, err := fn(u, left)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `update users set deleted = true, updated_at = $3 where app_id = $1 and id = $2`,
			appID, userID, u.UpdatedAt); err != nil {
			return err
		}
		out = u
		return events.InsertOutbox(ctx, tx, evs...)
	})
	if err != nil {
		return domain.User{}, err
	}
	return out, nil
}

// UpdateUser implements app.Users. The row is locked for the duration of fn, so concurrent updates
// of one user apply one after the other and each sees the other's result.
func (s *Store) UpdateUser(ctx context.Context, appID, userID string, fn func(*domain.User) ([]events.Event, error)) (domain.User, error) {
	if !ids(appID, userID) {
		return domain.User{}, domain.NotFound("user")
	}
	var out domain.User
	err := pgxx.InTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		u, evs, err := updateUserTx(ctx, tx, appID, userID, fn)
		if err != nil {
			return err
		}
		out = u
		return events.InsertOutbox(ctx, tx, evs...)
	})
	if err != nil {
		return domain.User{}, err
	}
	return out, nil
}

// updateUserTx locks the user row for tx, runs fn on it and writes the result; the caller commits
// fn's events with the rest of its change.
func updateUserTx(ctx context.Context, tx pgx.Tx, appID, userID string, fn func(*domain.User) ([]events.Event, error)) (domain.User, []events.Event, error) {
	u, err := scanUser(tx.QueryRow(ctx, selectUsers+`where app_id = $1 and id = $2 for update`, appID, userID))
	if err != nil {
		return domain.User{}, nil, err
	}
	evs, err := fn(&u)
	if err != nil {
		return domain.User{}, nil, err
	}
	u.ID, u.AppID = userID, appID // fn cannot move the user to another row or app
	if _, err := tx.Exec(ctx, updateUser, userFields(&u)...); err != nil {
		return domain.User{}, nil, translate(err, "app")
	}
	return u, evs, nil
}

// ListTenantUsers implements app.Users.
func (s *Store) ListTenantUsers(ctx context.Context, appID, tenantID string) ([]domain.User, error) {
	if !ids(appID) || tenantID == "" {
		return nil, nil
	}
	rows, err := pgxx.Q(ctx, s.pool).Query(ctx,
		selectUsers+`where app_id = $1 and tenant_id = $2 and not deleted order by created_at, id`, appID, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list tenant users: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.User, error) { return scanUser(row) })
}
