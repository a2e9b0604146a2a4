package webpage

import (
	"net/http"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/reqid"
)

// Card is a hosted page's error card, rendered by the layout's {{template "card" .}}: a title and
// a message (catalog keys) and the request id as its reference, which the log lines about the
// refusal carry too. A card keeps the neutral look: it mostly answers a link nobody vouched for.
type Card struct {
	Title     string
	Message   string
	RequestID string
	locale.Printer
}

// NewCard is the card answering r, in the language the request names (Language without an app
// default: the app is unknown, refused, or not known to the page).
func NewCard(r *http.Request, title, message string) Card {
	return Card{Title: title, Message: message, RequestID: reqid.From(r.Context()), Printer: locale.For(Language(r, ""))}
}

// Head is the layout's view of the card.
func (c Card) Head() Head {
	return Head{Title: c.T(c.Title), Printer: c.Printer}
}
