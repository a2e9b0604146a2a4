package webpage

import (
	"net/http"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/reqid"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Card is a hosted page's error card, rendered by the layout's {{template "card" .}}: a title and
// a message (catalog keys) and the request id as its reference, which the log lines about the
// refusal carry too. A card keeps the neutral look unless the page knows the app it answers for
// (WithApp): it mostly answers a link nobody vouched for.
type Card struct {
	Title     string
	Message   string
	RequestID string
	Brand     Brand
	locale.Printer
}

// NewCard is the card answering r, in the language the request names (Language without an app
// default: the app is unknown, refused, or not known to the page).
func NewCard(r *http.Request, title, message string) Card {
	return Card{Title: title, Message: message, RequestID: reqid.From(r.Context()), Printer: locale.For(Language(r, ""))}
}

// WithApp is the card in the look of the app whose branding identity answered, and in its
// default language when neither the link nor the browser names one.
func (c Card) WithApp(r *http.Request, b *identityv1.AppBranding) Card {
	c.Brand, c.Printer = BrandOf(b), locale.For(Language(r, b.GetDefaultLanguage()))
	return c
}

// Head is the layout's view of the card.
func (c Card) Head() Head {
	return Head{Title: c.T(c.Title), Brand: c.Brand, Printer: c.Printer}
}
