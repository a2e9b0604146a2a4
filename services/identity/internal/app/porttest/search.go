package porttest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

func testSearchUsers(t *testing.T, newStore Factory) {
	ctx := context.Background()
	emails := func(us []domain.User) []string {
		out := []string{}
		for _, u := range us {
			out = append(out, u.Email)
		}
		return out
	}
	search := func(t *testing.T, s app.Store, appID string, q keyset.Search) []domain.User {
		t.Helper()
		us, err := s.SearchUsers(ctx, appID, q)
		if err != nil {
			t.Fatalf("SearchUsers(%+v): %v", q, err)
		}
		return us
	}
	prefix := func(p string, limit int) keyset.Search {
		return keyset.Search{Query: keyset.Query{Prefix: p}, Limit: limit}
	}
	// seed stores a user of each address in a fresh app, and one of another app with the first.
	seed := func(t *testing.T, addresses ...string) (app.Store, domain.App) {
		s, _ := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		for _, e := range addresses {
			seedUser(t, s, newUser(a.ID, e))
		}
		seedUser(t, s, newUser(other.ID, addresses[0]))
		return s, a
	}

	t.Run("PrefixMatchesCaseInsensitivelyInEmailOrder", func(t *testing.T) {
		s, a := seed(t, "bob@example.test", "Anna@Example.test", "ann@example.test", "ANDY@example.test", "carl@example.test")
		wantEqual(t, "prefix an", emails(search(t, s, a.ID, prefix("an", 10))),
			[]string{"ANDY@example.test", "ann@example.test", "Anna@Example.test"})
		wantEqual(t, "prefix ANN lower-cased by the caller", emails(search(t, s, a.ID, prefix("ann", 10))),
			[]string{"ann@example.test", "Anna@Example.test"})
		wantEqual(t, "every user", len(search(t, s, a.ID, prefix("", 10))), 5)
		wantEqual(t, "no match", emails(search(t, s, a.ID, prefix("dora", 10))), []string{})
	})

	t.Run("WildcardsInThePrefixAreLetters", func(t *testing.T) {
		s, a := seed(t, "a_b@example.test", "axb@example.test", "a%c@example.test", "abc@example.test")
		wantEqual(t, "prefix a_", emails(search(t, s, a.ID, prefix("a_", 10))), []string{"a_b@example.test"})
		wantEqual(t, "prefix a%", emails(search(t, s, a.ID, prefix("a%", 10))), []string{"a%c@example.test"})
	})

	t.Run("DeletedUsersAndOtherAppsAreNeverFound", func(t *testing.T) {
		s, a := seed(t, "ann@example.test", "anna@example.test")
		u, err := s.GetUserByEmail(ctx, a.ID, "anna@example.test")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteUser(ctx, a.ID, u.ID, t0, func(domain.User, int) ([]events.Event, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "after the deletion", emails(search(t, s, a.ID, prefix("ann", 10))), []string{"ann@example.test"})
		wantEqual(t, "by the deleted id", len(search(t, s, a.ID, keyset.Search{Query: keyset.Query{ID: u.ID}, Limit: 10})), 0)
		wantEqual(t, "an app without users", len(search(t, s, seedApp(t, s).ID, prefix("", 10))), 0)
		wantEqual(t, "an unknown app", len(search(t, s, uuid.NewString(), prefix("", 10))), 0)
	})

	t.Run("IDMatchesOneUserOfTheApp", func(t *testing.T) {
		s, _ := newStore(t)
		a, other := seedApp(t, s), seedApp(t, s)
		u := seedUser(t, s, newUser(a.ID, "ann@example.test"))
		stranger := seedUser(t, s, newUser(other.ID, "ann@example.test"))
		seedUser(t, s, newUser(a.ID, "bob@example.test"))
		got := search(t, s, a.ID, keyset.Search{Query: keyset.Query{ID: u.ID}, Limit: 10})
		wantEqual(t, "by id", len(got), 1)
		wantEqual(t, "the user", got[0].ID, u.ID)
		wantEqual(t, "another app's user", len(search(t, s, a.ID, keyset.Search{Query: keyset.Query{ID: stranger.ID}, Limit: 10})), 0)
	})

	t.Run("PagesFollowTheCursorInKeyOrder", func(t *testing.T) {
		s, _ := newStore(t)
		a := seedApp(t, s)
		var want []keyset.Key
		for i := range 7 {
			// Random addresses in mixed case, so that neither insertion order nor case is the order.
			u := seedUser(t, s, newUser(a.ID, strings.Repeat("xX", i%3+1)+uuid.NewString()[:8]+"@example.test"))
			want = append(want, app.UserKey(u))
		}
		slices.SortFunc(want, keyset.Key.Compare)
		var got []keyset.Key
		q := prefix("x", 3)
		for range 10 {
			page := search(t, s, a.ID, q)
			if len(page) > q.Limit {
				t.Fatalf("a page of %d rows for a limit of %d", len(page), q.Limit)
			}
			for _, u := range page {
				got = append(got, app.UserKey(u))
			}
			if len(page) < q.Limit {
				break
			}
			last := app.UserKey(page[len(page)-1])
			q.After = &last
		}
		wantEqual(t, "every user once, in order", got, want)
	})

	t.Run("InsertsBeforeTheCursorDoNotShiftTheNextPage", func(t *testing.T) {
		s, a := seed(t, "b1@example.test", "b2@example.test", "b3@example.test", "b4@example.test")
		first := search(t, s, a.ID, prefix("b", 2))
		wantEqual(t, "first page", emails(first), []string{"b1@example.test", "b2@example.test"})
		seedUser(t, s, newUser(a.ID, "b0@example.test"))
		seedUser(t, s, newUser(a.ID, "b15@example.test"))
		seedUser(t, s, newUser(a.ID, "b5@example.test"))
		last := app.UserKey(first[1])
		q := prefix("b", 10)
		q.After = &last
		wantEqual(t, "the next page", emails(search(t, s, a.ID, q)), []string{"b3@example.test", "b4@example.test", "b5@example.test"})
	})

	t.Run("ACursorOutsideThePrefixStaysInsideIt", func(t *testing.T) {
		s, a := seed(t, "ann@example.test", "bob@example.test", "bobby@example.test", "carl@example.test")
		below := keyset.Key{Text: "a", ID: uuid.NewString()}
		q := prefix("bob", 10)
		q.After = &below
		wantEqual(t, "cursor below the prefix", emails(search(t, s, a.ID, q)), []string{"bob@example.test", "bobby@example.test"})
		above := keyset.Key{Text: "c", ID: uuid.NewString()}
		q.After = &above
		wantEqual(t, "cursor above the prefix", emails(search(t, s, a.ID, q)), []string{})
	})
}
