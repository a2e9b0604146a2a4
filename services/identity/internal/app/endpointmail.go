package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/accountmail"
)

// ConsoleEventsPath is the console's events page of an app ({app} its id), which the notice of a
// disabled endpoint links to, under the deployment's public URL.
const ConsoleEventsPath = "/console/apps/{app}/events"

// DisabledEndpoint is what outbound says of an endpoint it stopped sending to.
type DisabledEndpoint struct {
	AppID, EndpointID, URL string
	FailingSince           time.Time
}

// ErrNoMailer answers a notice that cannot be mailed on this deployment (no mailer or public URL):
// it can never be sent, so the caller drops it rather than retrying.
var ErrNoMailer = errors.New("identity: notices need the deployment's mailer and public URL")

// NotifyEndpointDisabled mails every member of the app's project who accepted their invitation
// that the endpoint was disabled, with its URL, since when it fails and the console's events page.
// Members who were only invited have no console account to act with and get nothing. The mail is
// in the language the member was invited in, English when none was chosen.
//
// Every mail is composed before the first is sent, so a mail that cannot be composed sends none;
// a send that fails returns the error so the caller tries the whole notice again (the members
// mailed before the failure then get it a second time: a mailer that fails midway is rare, a
// member never told is worse). An app that no longer exists is domain.ErrNotFound.
func (s *Service) NotifyEndpointDisabled(ctx context.Context, d DisabledEndpoint) error {
	if s.mailer == nil || s.publicURL == "" {
		return ErrNoMailer
	}
	a, err := s.store.GetApp(ctx, domain.CanonicalID(d.AppID))
	if err != nil {
		return err
	}
	members, err := s.store.ListProjectMembers(ctx, a.ProjectID)
	if err != nil {
		return err
	}
	link := s.publicURL + strings.Replace(ConsoleEventsPath, "{app}", a.ID, 1)
	var msgs []mail.Message
	for _, m := range members {
		if !m.Accepted() {
			continue
		}
		msg, err := accountmail.ComposeEndpointDisabled(locale.Choose(m.Language, "", ""), accountmail.EndpointDisabled{
			To: m.Email, App: a.Name, URL: d.URL, FailingSince: d.FailingSince.UTC().Format("2006-01-02 15:04 UTC"), Link: link,
		})
		if err != nil {
			return err
		}
		msgs = append(msgs, msg)
	}
	for _, msg := range msgs {
		if err := s.mailer.Send(ctx, msg); err != nil {
			return fmt.Errorf("identity: mail the notice of disabled endpoint %s: %w", d.EndpointID, err)
		}
	}
	return nil
}
