package invite

import (
	"testing"

	"github.com/berthhq/berth/pkg/locale"
)

func TestTheInviteUsesOnlyMessagesOfTheCatalog(t *testing.T) {
	if unknown := locale.UnknownKeys(subjectTemplate.Tree, textTemplate.Tree, htmlTemplate.Tree); len(unknown) > 0 {
		t.Errorf("the invite's templates use keys the catalog lacks: %q", unknown)
	}
}
