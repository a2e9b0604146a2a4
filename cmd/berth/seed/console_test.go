package seed_test

import (
	"context"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/cmd/berth/stacktest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// TestTheDemosConsoleMemberSignsInWithItsPassword protects make run's console line: the seeded
// member accepted the invitation the run mailed, and signs in to the demo project with the
// password demo.json and the banner show.
func TestTheDemosConsoleMemberSignsInWithItsPassword(t *testing.T) {
	env := stacktest.Start(t, "console-test", "https://app.example.com/callback")
	c := env.App.Console
	if c.URL != env.Stack.BaseURL+seed.ConsolePath || c.Email != seed.ConsoleEmail || len(c.Password) != 20 {
		t.Fatalf("console member = %+v", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := env.Admin.Members.SignInMember(ctx, &identityv1.SignInMemberRequest{Email: c.Email, Password: c.Password, ClientAddress: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if in.GetToken() == "" || in.GetMember().GetProjectId() != env.App.ProjectID || in.GetMember().GetEmail() != c.Email {
		t.Errorf("sign-in = %v, want a session of the demo project", in)
	}
	if _, err := env.Admin.Members.SignInMember(ctx, &identityv1.SignInMemberRequest{Email: c.Email, Password: c.Password + "x"}); err == nil {
		t.Error("a wrong password signed the console member in")
	}
}

func TestInvitationTokenFindsTheLinksToken(t *testing.T) {
	for text, want := range map[string]string{
		"Open https://berth.test/console/invitation?token=abc_DEF-123 now": "abc_DEF-123",
		"https://berth.test/login?token=abc":                               "",
		"":                                                                 "",
	} {
		if got := seed.InvitationToken(text); got != want {
			t.Errorf("InvitationToken(%q) = %q, want %q", text, got, want)
		}
	}
}
