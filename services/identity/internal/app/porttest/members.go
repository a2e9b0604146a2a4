package porttest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// invited stores a membership of project with its invitation and returns both.
func invited(t *testing.T, s app.Store, projectID, email string) (domain.ProjectMember, domain.Invitation) {
	t.Helper()
	m := domain.ProjectMember{ID: uuid.NewString(), ProjectID: projectID, Email: email, Name: "Member", CreatedAt: t0, Language: "de"}
	inv := domain.Invitation{Hash: []byte(uuid.NewString()), MemberID: m.ID, ProjectID: projectID, Email: email,
		CreatedAt: t0, ExpiresAt: t0.Add(domain.InvitationTTL)}
	if err := s.InviteProjectMember(context.Background(), m, inv); err != nil {
		t.Fatalf("InviteProjectMember: %v", err)
	}
	return m, inv
}

func newAccount(email string) domain.MemberAccount {
	return domain.MemberAccount{ID: uuid.NewString(), Email: email, Name: "Ada", PasswordHash: "$argon2id$hash", CreatedAt: t0}
}

// accepted stores an accepted membership of project for account (created with it when new).
func accepted(t *testing.T, s app.Store, projectID string, a domain.MemberAccount) domain.ProjectMember {
	t.Helper()
	_, inv := invited(t, s, projectID, a.Email)
	m, err := s.AcceptInvitation(context.Background(), inv.Hash, a, t0.Add(time.Minute))
	if err != nil {
		t.Fatalf("AcceptInvitation: %v", err)
	}
	return m
}

func testMemberAccounts(t *testing.T, newStore Factory) {
	ctx := context.Background()

	t.Run("an invitation is stored with its membership and accepted once", func(t *testing.T) {
		s, _ := newStore(t)
		p := seedProject(t, s)
		m, inv := invited(t, s, p.ID, "ada@example.test")
		got, err := s.GetInvitation(ctx, inv.Hash)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "stored invitation", got, inv)
		a := newAccount("ada@example.test")
		at := t0.Add(time.Hour)
		member, err := s.AcceptInvitation(ctx, inv.Hash, a, at)
		if err != nil {
			t.Fatal(err)
		}
		want := m
		want.AccountID, want.AcceptedAt = a.ID, &at
		wantEqual(t, "accepted membership", member, want)
		stored, _ := s.GetProjectMember(ctx, m.ID)
		wantEqual(t, "stored membership", stored, want)
		acc, err := s.GetMemberAccount(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "account", acc, a)
		byEmail, err := s.GetMemberAccountByEmail(ctx, "ADA@example.test ")
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "account by email", byEmail, a)
		used, _ := s.GetInvitation(ctx, inv.Hash)
		if used.UsedAt == nil || !used.UsedAt.Equal(at) {
			t.Errorf("invitation used at %v, want %v", used.UsedAt, at)
		}
		if _, err := s.AcceptInvitation(ctx, inv.Hash, a, at); !errors.Is(err, domain.ErrInvitationSpent) {
			t.Errorf("second acceptance: error = %v, want ErrInvitationSpent", err)
		}
	})

	t.Run("an expired or unknown invitation is spent and changes nothing", func(t *testing.T) {
		s, _ := newStore(t)
		p := seedProject(t, s)
		m, inv := invited(t, s, p.ID, "ada@example.test")
		a := newAccount("ada@example.test")
		if _, err := s.AcceptInvitation(ctx, inv.Hash, a, inv.ExpiresAt); !errors.Is(err, domain.ErrInvitationSpent) {
			t.Errorf("expired: error = %v, want ErrInvitationSpent", err)
		}
		if _, err := s.AcceptInvitation(ctx, []byte("unknown"), a, t0); !errors.Is(err, domain.ErrInvitationSpent) {
			t.Errorf("unknown: error = %v, want ErrInvitationSpent", err)
		}
		_, err := s.GetMemberAccount(ctx, a.ID)
		wantNotFound(t, "account of a refused acceptance", err)
		stored, _ := s.GetProjectMember(ctx, m.ID)
		wantEqual(t, "membership of a refused acceptance", stored, m)
	})

	t.Run("of concurrent acceptances of one invitation exactly one succeeds", func(t *testing.T) {
		s, _ := newStore(t)
		_, inv := invited(t, s, seedProject(t, s).ID, "ada@example.test")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.AcceptInvitation(ctx, inv.Hash, newAccount("ada@example.test"), t0.Add(time.Minute))
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, domain.ErrInvitationSpent):
				t.Errorf("unexpected error %v", err)
			}
		}
		if ok != 1 {
			t.Errorf("%d acceptances succeeded, want 1", ok)
		}
	})

	t.Run("one account accepts memberships of several projects", func(t *testing.T) {
		s, _ := newStore(t)
		p1, p2, p3 := seedProject(t, s), seedProject(t, s), seedProject(t, s)
		a := newAccount("ada@example.test")
		m1 := accepted(t, s, p1.ID, a)
		m2 := accepted(t, s, p2.ID, a)
		invited(t, s, p3.ID, "ada@example.test") // not accepted: no membership of the account
		got, err := s.ListAccountMemberships(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Both were created at t0: the order is then by id.
		want := []domain.ProjectMember{m1, m2}
		if m2.ID < m1.ID {
			want = []domain.ProjectMember{m2, m1}
		}
		wantEqual(t, "memberships", got, want)
		// A second account for the same address is refused.
		_, inv := invited(t, s, seedProject(t, s).ID, "ada@example.test")
		if _, err := s.AcceptInvitation(ctx, inv.Hash, newAccount("ada@example.test"), t0); !errors.Is(err, domain.ErrMemberAccountTaken) {
			t.Errorf("second account of one address: error = %v, want ErrMemberAccountTaken", err)
		}
	})

	t.Run("a project's members are listed oldest first, accepted or not", func(t *testing.T) {
		s, _ := newStore(t)
		p := seedProject(t, s)
		first, _ := invited(t, s, p.ID, "first@example.test")
		m := domain.ProjectMember{ID: uuid.NewString(), ProjectID: p.ID, Email: "second@example.test", Name: "Second", CreatedAt: t0.Add(time.Second)}
		inv := domain.Invitation{Hash: []byte("second"), MemberID: m.ID, ProjectID: p.ID, Email: m.Email, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
		if err := s.InviteProjectMember(ctx, m, inv); err != nil {
			t.Fatal(err)
		}
		invited(t, s, seedProject(t, s).ID, "other@example.test")
		got, err := s.ListProjectMembers(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "members", []string{got[0].ID, got[1].ID}, []string{first.ID, m.ID})
		if len(got) != 2 {
			t.Errorf("%d members, want 2", len(got))
		}
		again := m
		again.ID, again.Email = uuid.NewString(), "SECOND@example.test"
		if err := s.InviteProjectMember(ctx, again, domain.Invitation{Hash: []byte("again"), MemberID: again.ID, ProjectID: p.ID, Email: again.Email, CreatedAt: t0, ExpiresAt: t0}); !errors.Is(err, domain.ErrMemberTaken) {
			t.Errorf("inviting a member again: error = %v, want ErrMemberTaken", err)
		}
		_, err = s.GetInvitation(ctx, []byte("again"))
		wantNotFound(t, "invitation of a refused member", err)
		orphan := domain.ProjectMember{ID: uuid.NewString(), ProjectID: uuid.NewString(), Email: "x@example.test", Name: "X", CreatedAt: t0}
		wantNotFound(t, "invitation to an unknown project", s.InviteProjectMember(ctx, orphan, domain.Invitation{Hash: []byte("orphan"), MemberID: orphan.ID, ProjectID: orphan.ProjectID, Email: orphan.Email, CreatedAt: t0, ExpiresAt: t0}))
	})
}

func testMemberSessions(t *testing.T, newStore Factory) {
	ctx := context.Background()

	t.Run("a session is stored, touched while live and ended once, with its event", func(t *testing.T) {
		s, outbox := newStore(t)
		a := newAccount("ada@example.test")
		m := accepted(t, s, seedProject(t, s).ID, a)
		sess := domain.NewMemberSession(a, m, "192.0.2.1", "Browser", t0)
		if err := s.CreateMemberSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetMemberSession(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "stored session", got, sess)
		later := t0.Add(time.Hour)
		if err := s.TouchMemberSession(ctx, sess.ID, later); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetMemberSession(ctx, sess.ID)
		wantEqual(t, "last used", got.LastUsedAt, later)
		end := t0.Add(2 * time.Hour)
		ended := mustEvent(t, identityv1.EventMemberSessionEnded, "")
		if err := s.EndMemberSession(ctx, sess.ID, end, ended); err != nil {
			t.Fatal(err)
		}
		if err := s.EndMemberSession(ctx, sess.ID, end.Add(time.Hour), mustEvent(t, identityv1.EventMemberSessionEnded, "")); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "events of the first end only", pendingIDs(t, outbox), []string{ended.ID})
		if err := s.TouchMemberSession(ctx, sess.ID, end.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, _ = s.GetMemberSession(ctx, sess.ID)
		if got.EndedAt == nil || !got.EndedAt.Equal(end) || !got.LastUsedAt.Equal(later) {
			t.Errorf("ended session = %+v, want ended at %v and last used %v", got, end, later)
		}
		_, err = s.GetMemberSession(ctx, uuid.NewString())
		wantNotFound(t, "unknown session", err)
		wantNotFound(t, "touching an unknown session", s.TouchMemberSession(ctx, uuid.NewString(), t0))
		wantNotFound(t, "ending an unknown session", s.EndMemberSession(ctx, "not-a-uuid", t0))
	})

	t.Run("a session needs its account", func(t *testing.T) {
		s, _ := newStore(t)
		m, _ := invited(t, s, seedProject(t, s).ID, "ada@example.test")
		wantNotFound(t, "session of an unknown account", s.CreateMemberSession(ctx, domain.NewMemberSession(newAccount("x@example.test"), m, "", "", t0)))
	})

	t.Run("a challenge takes MaxCodeAttempts wrong codes and is spent once", func(t *testing.T) {
		s, _ := newStore(t)
		a := newAccount("ada@example.test")
		m := accepted(t, s, seedProject(t, s).ID, a)
		c, _, err := domain.NewMemberChallenge(a, m, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateMemberChallenge(ctx, c); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetMemberChallenge(ctx, c.Hash)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "stored challenge", got, c)
		for i := 1; i < domain.MaxCodeAttempts; i++ {
			got, err := s.RecordMemberWrongCode(ctx, c.ID, t0)
			if err != nil || got.WrongCodes != i {
				t.Fatalf("wrong code %d: %+v, %v", i, got, err)
			}
		}
		if err := s.SpendMemberChallenge(ctx, c.ID, t0); err != nil {
			t.Fatalf("spend with attempts left: %v", err)
		}
		if err := s.SpendMemberChallenge(ctx, c.ID, t0); !errors.Is(err, domain.ErrChallengeSpent) {
			t.Errorf("second spend: error = %v, want ErrChallengeSpent", err)
		}
		if _, err := s.RecordMemberWrongCode(ctx, c.ID, t0); !errors.Is(err, domain.ErrChallengeSpent) {
			t.Errorf("wrong code on a spent challenge: error = %v, want ErrChallengeSpent", err)
		}
	})

	t.Run("an expired or exhausted challenge cannot be spent", func(t *testing.T) {
		s, _ := newStore(t)
		a := newAccount("ada@example.test")
		m := accepted(t, s, seedProject(t, s).ID, a)
		expired, _, _ := domain.NewMemberChallenge(a, m, t0)
		exhausted, _, _ := domain.NewMemberChallenge(a, m, t0)
		for _, c := range []domain.MemberChallenge{expired, exhausted} {
			if err := s.CreateMemberChallenge(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SpendMemberChallenge(ctx, expired.ID, expired.ExpiresAt); !errors.Is(err, domain.ErrChallengeSpent) {
			t.Errorf("expired: error = %v, want ErrChallengeSpent", err)
		}
		for range domain.MaxCodeAttempts {
			if _, err := s.RecordMemberWrongCode(ctx, exhausted.ID, t0); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SpendMemberChallenge(ctx, exhausted.ID, t0); !errors.Is(err, domain.ErrChallengeSpent) {
			t.Errorf("exhausted: error = %v, want ErrChallengeSpent", err)
		}
		_, err := s.GetMemberChallenge(ctx, []byte("unknown"))
		wantNotFound(t, "unknown challenge", err)
	})
}

func testMemberFactors(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s, _ := newStore(t)
	a := newAccount("ada@example.test")
	accepted(t, s, seedProject(t, s).ID, a)
	_, err := s.GetMemberFactor(ctx, a.ID)
	wantNotFound(t, "factor before enrolment", err)

	first := domain.Factor{ID: uuid.NewString(), UserID: a.ID, Kind: domain.FactorTOTP, SealedSecret: []byte("one"), CreatedAt: t0}
	if err := s.SavePendingMemberFactor(ctx, first); err != nil {
		t.Fatal(err)
	}
	pending := domain.Factor{ID: uuid.NewString(), UserID: a.ID, Kind: domain.FactorTOTP, SealedSecret: []byte("two"), CreatedAt: t0.Add(time.Minute)}
	if err := s.SavePendingMemberFactor(ctx, pending); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMemberFactor(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "pending factor replaces the older", got, pending)
	wantNotFound(t, "confirming a replaced factor", s.ConfirmMemberFactor(ctx, a.ID, first.ID, 1, t0, nil))

	codes := []domain.RecoveryCode{{UserID: a.ID, Hash: []byte("code-1"), CreatedAt: t0}, {UserID: a.ID, Hash: []byte("code-2"), CreatedAt: t0}}
	at := t0.Add(2 * time.Minute)
	if err := s.ConfirmMemberFactor(ctx, a.ID, pending.ID, 100, at, codes); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetMemberFactor(ctx, a.ID)
	if !got.Confirmed() || got.LastStep != 100 {
		t.Errorf("confirmed factor = %+v", got)
	}
	wantNotFound(t, "confirming twice", s.ConfirmMemberFactor(ctx, a.ID, pending.ID, 101, at, nil))
	if err := s.SavePendingMemberFactor(ctx, first); !errors.Is(err, domain.ErrFactorEnrolled) {
		t.Errorf("enrolling over a confirmed factor: error = %v, want ErrFactorEnrolled", err)
	}

	if err := s.UseMemberFactorStep(ctx, a.ID, pending.ID, 100, at); !errors.Is(err, domain.ErrCodeReplayed) {
		t.Errorf("step already used: error = %v, want ErrCodeReplayed", err)
	}
	if err := s.UseMemberFactorStep(ctx, a.ID, pending.ID, 101, at); err != nil {
		t.Errorf("next step: %v", err)
	}
	if got, _ = s.GetMemberFactor(ctx, a.ID); got.LastStep != 101 || got.LastUsedAt == nil || !got.LastUsedAt.Equal(at) {
		t.Errorf("used factor = %+v, want step 101 last used at %v", got, at)
	}
	wantNotFound(t, "step of an unknown factor", s.UseMemberFactorStep(ctx, a.ID, uuid.NewString(), 200, at))

	if err := s.UseMemberRecoveryCode(ctx, a.ID, []byte("code-1"), at); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "recovery code used twice", s.UseMemberRecoveryCode(ctx, a.ID, []byte("code-1"), at))
	wantNotFound(t, "unknown recovery code", s.UseMemberRecoveryCode(ctx, a.ID, []byte("nope"), at))
	if err := s.UseMemberRecoveryCode(ctx, a.ID, []byte("code-2"), at); err != nil {
		t.Error(err)
	}
}

func testMemberPasskeys(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s, _ := newStore(t)
	project := seedProject(t, s)
	a, other := newAccount("ada@example.test"), newAccount("bob@example.test")
	accepted(t, s, project.ID, a)
	accepted(t, s, project.ID, other)
	passkey := func(account domain.MemberAccount, name string, at time.Time, counter int64) domain.Factor {
		return domain.Factor{ID: uuid.NewString(), UserID: account.ID, Kind: domain.FactorPasskey, SealedSecret: []byte(name),
			Name: name, CreatedAt: at, LastStep: counter}
	}
	codes := func(names ...string) []domain.RecoveryCode {
		out := make([]domain.RecoveryCode, 0, len(names))
		for _, n := range names {
			out = append(out, domain.RecoveryCode{UserID: a.ID, Hash: []byte(n), CreatedAt: t0})
		}
		return out
	}

	laptop := passkey(a, "Laptop", t0, 5)
	first, err := s.AddMemberPasskey(ctx, laptop, codes("first-1", "first-2"))
	if err != nil || !first {
		t.Fatalf("first passkey: first = %v, error = %v; want its codes stored", first, err)
	}
	phone := passkey(a, "Phone", t0.Add(time.Minute), 0)
	if first, err := s.AddMemberPasskey(ctx, phone, codes("second-1")); err != nil || first {
		t.Fatalf("second passkey: first = %v, error = %v; want the codes kept", first, err)
	}
	wantNotFound(t, "the codes of a second passkey", s.UseMemberRecoveryCode(ctx, a.ID, []byte("second-1"), t0))
	if err := s.UseMemberRecoveryCode(ctx, a.ID, []byte("first-1"), t0); err != nil {
		t.Errorf("the first passkey's code: %v", err)
	}
	_, err = s.AddMemberPasskey(ctx, passkey(domain.MemberAccount{ID: uuid.NewString()}, "Ghost", t0, 0), nil)
	wantNotFound(t, "passkey of an unknown account", err)

	// A pending TOTP factor sits beside the passkeys without changing them.
	totp := domain.Factor{ID: uuid.NewString(), UserID: a.ID, Kind: domain.FactorTOTP, SealedSecret: []byte("totp"), CreatedAt: t0.Add(2 * time.Minute)}
	if err := s.SavePendingMemberFactor(ctx, totp); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetMemberFactor(ctx, a.ID); err != nil || got.ID != totp.ID {
		t.Errorf("GetMemberFactor = %+v, %v; want the TOTP factor", got, err)
	}
	list, err := s.ListMemberFactors(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	confirmed := func(f domain.Factor) domain.Factor { at := f.CreatedAt; f.ConfirmedAt = &at; return f }
	wantEqual(t, "the account's factors, oldest first", list, []domain.Factor{confirmed(laptop), confirmed(phone), totp})
	if list, _ := s.ListMemberFactors(ctx, other.ID); len(list) != 0 {
		t.Errorf("another account's factors = %+v, want none", list)
	}

	// The signature counter must rise, except for an authenticator that keeps none (0 over 0).
	at := t0.Add(time.Hour)
	for _, c := range []struct {
		what    string
		id      string
		step    int64
		replay  bool
		account string
	}{
		{what: "counter at the registered value", id: laptop.ID, step: 5, replay: true},
		{what: "counter below it", id: laptop.ID, step: 4, replay: true},
		{what: "counter that rises", id: laptop.ID, step: 6},
		{what: "authenticator without a counter", id: phone.ID, step: 0},
		{what: "again without a counter", id: phone.ID, step: 0},
	} {
		err := s.UseMemberFactorStep(ctx, a.ID, c.id, c.step, at)
		if c.replay && !errors.Is(err, domain.ErrCodeReplayed) || !c.replay && err != nil {
			t.Errorf("%s: error = %v, want replayed %v", c.what, err, c.replay)
		}
	}
	wantNotFound(t, "another account's passkey used", s.UseMemberFactorStep(ctx, other.ID, laptop.ID, 100, at))
	wantNotFound(t, "a pending factor used", s.UseMemberFactorStep(ctx, a.ID, totp.ID, 100, at))
	list, _ = s.ListMemberFactors(ctx, a.ID)
	if list[0].LastStep != 6 || list[0].LastUsedAt == nil || !list[0].LastUsedAt.Equal(at) {
		t.Errorf("used passkey = %+v, want counter 6 last used at %v", list[0], at)
	}

	wantNotFound(t, "another account's passkey removed", s.RemoveMemberFactor(ctx, other.ID, domain.FactorPasskey, laptop.ID))
	wantNotFound(t, "the TOTP factor removed as a passkey", s.RemoveMemberFactor(ctx, a.ID, domain.FactorPasskey, totp.ID))
	wantNotFound(t, "an unknown passkey removed", s.RemoveMemberFactor(ctx, a.ID, domain.FactorPasskey, uuid.NewString()))
	if err := s.RemoveMemberFactor(ctx, a.ID, domain.FactorPasskey, laptop.ID); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "a removed passkey used", s.UseMemberFactorStep(ctx, a.ID, laptop.ID, 50, at))
	wantNotFound(t, "a passkey removed twice", s.RemoveMemberFactor(ctx, a.ID, domain.FactorPasskey, laptop.ID))
	if err := s.UseMemberRecoveryCode(ctx, a.ID, []byte("first-2"), at); err != nil {
		t.Errorf("codes while a passkey is left: %v", err)
	}
	wantNotFound(t, "a passkey removed as the TOTP factor", s.RemoveMemberFactor(ctx, a.ID, domain.FactorTOTP, phone.ID))
	if err := s.RemoveMemberFactor(ctx, a.ID, domain.FactorPasskey, phone.ID); err != nil {
		t.Fatal(err)
	}
	list, _ = s.ListMemberFactors(ctx, a.ID)
	wantEqual(t, "factors after removing every passkey", list, []domain.Factor{totp})
	if err := s.RemoveMemberFactor(ctx, a.ID, domain.FactorTOTP, totp.ID); err != nil {
		t.Fatalf("removing a pending TOTP enrolment: %v", err)
	}
	if list, _ = s.ListMemberFactors(ctx, a.ID); len(list) != 0 {
		t.Errorf("factors after removing the TOTP enrolment: %+v, want none", list)
	}
	wantNotFound(t, "a TOTP factor removed twice", s.RemoveMemberFactor(ctx, a.ID, domain.FactorTOTP, totp.ID))

	// The last confirmed factor takes the recovery codes with it; the next first factor brings new
	// ones.
	b := newAccount("cy@example.test")
	accepted(t, s, project.ID, b)
	key := passkey(b, "Key", t0, 0)
	if _, err := s.AddMemberPasskey(ctx, key, []domain.RecoveryCode{{UserID: b.ID, Hash: []byte("b-1"), CreatedAt: t0}, {UserID: b.ID, Hash: []byte("b-2"), CreatedAt: t0}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveMemberFactor(ctx, b.ID, domain.FactorPasskey, key.ID); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "a code of an account without a factor", s.UseMemberRecoveryCode(ctx, b.ID, []byte("b-1"), at))
	if first, err := s.AddMemberPasskey(ctx, passkey(b, "Key 2", t0, 0), []domain.RecoveryCode{{UserID: b.ID, Hash: []byte("b-3"), CreatedAt: t0}}); err != nil || !first {
		t.Errorf("passkey after the last was removed: first = %v, error = %v", first, err)
	}
	if err := s.UseMemberRecoveryCode(ctx, b.ID, []byte("b-3"), at); err != nil {
		t.Errorf("the new first factor's code: %v", err)
	}

	// A confirmed TOTP factor removed beside a passkey leaves the codes; removing the passkey then
	// takes them, and TOTP can be enrolled again.
	c := newAccount("dee@example.test")
	accepted(t, s, project.ID, c)
	cTotp := domain.Factor{ID: uuid.NewString(), UserID: c.ID, Kind: domain.FactorTOTP, SealedSecret: []byte("c"), CreatedAt: t0}
	if err := s.SavePendingMemberFactor(ctx, cTotp); err != nil {
		t.Fatal(err)
	}
	if err := s.ConfirmMemberFactor(ctx, c.ID, cTotp.ID, 1, t0, []domain.RecoveryCode{{UserID: c.ID, Hash: []byte("c-1"), CreatedAt: t0}, {UserID: c.ID, Hash: []byte("c-2"), CreatedAt: t0}}); err != nil {
		t.Fatal(err)
	}
	cKey := passkey(c, "Key", t0.Add(time.Minute), 0)
	if _, err := s.AddMemberPasskey(ctx, cKey, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveMemberFactor(ctx, c.ID, domain.FactorTOTP, cTotp.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetMemberFactor(ctx, c.ID)
	wantNotFound(t, "the TOTP factor after its removal", err)
	if err := s.UseMemberRecoveryCode(ctx, c.ID, []byte("c-1"), at); err != nil {
		t.Errorf("codes while a passkey is left: %v", err)
	}
	if err := s.RemoveMemberFactor(ctx, c.ID, domain.FactorPasskey, cKey.ID); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "a code once the last factor is gone", s.UseMemberRecoveryCode(ctx, c.ID, []byte("c-2"), at))
	if err := s.SavePendingMemberFactor(ctx, cTotp); err != nil {
		t.Errorf("enrolling TOTP again after its removal: %v", err)
	}
}

func testProjectApps(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s, outbox := newStore(t)
	p := seedProject(t, s)
	older, newer := newApp(p.ID), newApp(p.ID)
	newer.CreatedAt = t0.Add(time.Second)
	for _, a := range []domain.App{newer, older, newApp(seedProject(t, s).ID)} {
		if err := s.CreateApp(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	apps, err := s.ListProjectApps(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(apps) != 2 || apps[0].ID != older.ID || apps[1].ID != newer.ID {
		t.Errorf("project apps = %v, want the two of the project, oldest first", apps)
	}

	keys := []domain.APIKey{
		{ID: uuid.NewString(), AppID: older.ID, Type: domain.KeyRead, Name: "read", Hash: []byte("h1"), CreatedAt: t0, UpdatedAt: t0},
		{ID: uuid.NewString(), AppID: older.ID, Type: domain.KeyWrite, Name: "write", Hash: []byte("h2"), CreatedAt: t0.Add(time.Second), UpdatedAt: t0},
		{ID: uuid.NewString(), AppID: newer.ID, Type: domain.KeyRead, Name: "other", Hash: []byte("h3"), CreatedAt: t0, UpdatedAt: t0},
	}
	for _, k := range keys {
		if err := s.CreateAPIKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ListAppAPIKeys(ctx, older.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "app's keys", got, keys[:2])

	wantNotFound(t, "revoking another app's key", s.RevokeAPIKey(ctx, older.ID, keys[2].ID, t0))
	ev := mustEvent(t, identityv1.EventAPIKeyChanged, older.ID)
	at := t0.Add(time.Hour)
	if err := s.RevokeAPIKey(ctx, older.ID, keys[0].ID, at, ev); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})
	got, _ = s.ListAppAPIKeys(ctx, older.ID)
	wantEqual(t, "keys after the revocation", got, keys[1:2])
	revoked, _ := s.GetAPIKey(ctx, keys[0].ID)
	if revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(at) {
		t.Errorf("revoked key = %+v", revoked)
	}
	wantNotFound(t, "revoking twice", s.RevokeAPIKey(ctx, older.ID, keys[0].ID, at, mustEvent(t, identityv1.EventAPIKeyChanged, older.ID)))
	wantEqual(t, "outbox after refused revocations", pendingIDs(t, outbox), []string{ev.ID})
}
