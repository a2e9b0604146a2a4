package seed

import (
	"context"
	"crypto/rand"
	"fmt"
	"regexp"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// ConsolePath is the web console on the edge.
const ConsolePath = "/console"

// ConsoleEmail is the address of the demo project's console member.
const ConsoleEmail = "owner@example.com"

// ConsoleDemo is the demo project's console member: where to sign in, and with what.
type ConsoleDemo struct {
	URL      string `json:"url"`
	Email    string `json:"email"`
	Password string `json:"password"`
}

// invitationToken finds the token of a console invitation link in a mail's text.
var invitationToken = regexp.MustCompile(`/console/invitation\?token=([A-Za-z0-9_-]+)`)

// InvitationToken is the invitation token of a mail's text, "" when it carries none.
func InvitationToken(text string) string {
	if m := invitationToken.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// passwordAlphabet has no look-alike characters, so the printed password is typed without doubt.
const passwordAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// newPassword draws a 20-character password (about 99 bits), uniformly: the alphabet's 31
// characters take bytes below 248, and the rest are drawn again.
func newPassword() (string, error) {
	out := make([]byte, 0, 20)
	buf := make([]byte, 32)
	for len(out) < cap(out) {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			if int(b) < 248 && len(out) < cap(out) {
				out = append(out, passwordAlphabet[int(b)%len(passwordAlphabet)])
			}
		}
	}
	return string(out), nil
}

// seedConsole makes the demo project's console member the way a person becomes one: berthctl's
// member-add mails the invitation, and the invitation link is accepted with a generated password.
// A run without a mailbox to read the invitation from (o.Invitation nil: a cluster's stacks) has no
// console member, and the zero ConsoleDemo says so.
func seedConsole(ctx context.Context, a Admin, projectID string, o Options) (ConsoleDemo, error) {
	if o.Invitation == nil {
		return ConsoleDemo{}, nil
	}
	d := ConsoleDemo{URL: o.BaseURL + ConsolePath, Email: ConsoleEmail}
	if a.Members == nil {
		return d, fmt.Errorf("console member: the seed needs the member API to accept the invitation")
	}
	if _, err := a.Identity.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: projectID, Email: d.Email, Name: "Demo owner"}); err != nil {
		return d, fmt.Errorf("console member: %w", err)
	}
	token, err := o.Invitation(d.Email)
	if err != nil {
		return d, fmt.Errorf("console member's invitation: %w", err)
	}
	if d.Password, err = newPassword(); err != nil {
		return d, err
	}
	if _, err := a.Members.AcceptInvitation(ctx, &identityv1.AcceptInvitationRequest{Token: token, Name: "Demo owner", Password: d.Password,
		ClientAddress: "127.0.0.1", UserAgent: "berth demo seed"}); err != nil {
		return d, fmt.Errorf("console member's acceptance: %w", err)
	}
	return d, nil
}
