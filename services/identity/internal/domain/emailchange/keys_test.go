package emailchange

import (
	"testing"

	"github.com/berthhq/berth/pkg/locale"
)

func TestTheMailsUseOnlyMessagesOfTheCatalog(t *testing.T) {
	if unknown := locale.UnknownKeys(subjectTemplate.Tree, textTemplate.Tree, htmlTemplate.Tree); len(unknown) > 0 {
		t.Errorf("the email-change mails' templates use keys the catalog lacks: %q", unknown)
	}
}
