package domain

import (
	"testing"
	"time"
)

var memberNow = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func TestMemberAccountsAreKeyedByTheNormalisedEmail(t *testing.T) {
	a, err := NewMemberAccount("  Ada@Example.TEST ", " Ada ", "hash", memberNow)
	if err != nil {
		t.Fatal(err)
	}
	if a.Email != "ada@example.test" || a.Name != "Ada" || a.ID == "" {
		t.Errorf("account = %+v", a)
	}
	for _, name := range []string{"", "   ", "line\nbreak"} {
		if _, err := NewMemberAccount("ada@example.test", name, "hash", memberNow); err == nil {
			t.Errorf("name %q was accepted", name)
		}
	}
}

func TestWhenMembersInvitationsSessionsAndChallengesAreLive(t *testing.T) {
	used := memberNow
	m := ProjectMember{ID: "m", ProjectID: "p", Email: "ada@example.test"}
	inv, secret, err := NewInvitation(m, memberNow)
	if err != nil || !WellFormedSecret(secret) || string(inv.Hash) != string(HashSecret(secret)) {
		t.Fatalf("invitation = %+v, %q, %v", inv, secret, err)
	}
	sess := NewMemberSession(MemberAccount{ID: "a"}, m, "192.0.2.1", "ua", memberNow)
	ch, _, err := NewMemberChallenge(MemberAccount{ID: "a"}, m, memberNow)
	if err != nil {
		t.Fatal(err)
	}
	usedInv, ended, usedCh, exhausted := inv, sess, ch, ch
	usedInv.UsedAt, ended.EndedAt, usedCh.UsedAt, exhausted.WrongCodes = &used, &used, &used, MaxCodeAttempts
	for _, tc := range []struct {
		name string
		live bool
		want bool
	}{
		{"a fresh invitation", inv.Live(memberNow), true},
		{"an invitation a moment before 7 days", inv.Live(memberNow.Add(InvitationTTL - time.Second)), true},
		{"an invitation after 7 days", inv.Live(memberNow.Add(InvitationTTL)), false},
		{"a used invitation", usedInv.Live(memberNow), false},
		{"a fresh session", sess.Live(memberNow), true},
		{"a session after 12 hours", sess.Live(memberNow.Add(MemberSessionTTL)), false},
		{"an ended session", ended.Live(memberNow), false},
		{"a fresh challenge", ch.Live(memberNow), true},
		{"a challenge after 5 minutes", ch.Live(memberNow.Add(MemberChallengeTTL)), false},
		{"a used challenge", usedCh.Live(memberNow), false},
		{"a challenge out of attempts", exhausted.Live(memberNow), false},
	} {
		if tc.live != tc.want {
			t.Errorf("%s: live = %v, want %v", tc.name, tc.live, tc.want)
		}
	}
}
