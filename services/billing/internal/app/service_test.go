package app_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/billing/internal/adapters/memory"
	"github.com/berthhq/berth/services/billing/internal/app"
)

func TestNewRequiresStoreBoxIDsAndAnAbsolutePublicURL(t *testing.T) {
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New(&events.MemoryOutbox{})
	const public = "https://berth.example"
	for name, c := range map[string]app.Config{
		"no store":           {Box: box, NewID: uuid.NewString, PublicURL: public},
		"no box":             {Store: store, NewID: uuid.NewString, PublicURL: public},
		"no ids":             {Store: store, Box: box, PublicURL: public},
		"no public URL":      {Store: store, Box: box, NewID: uuid.NewString},
		"a relative URL":     {Store: store, Box: box, NewID: uuid.NewString, PublicURL: "/pay"},
		"another URL scheme": {Store: store, Box: box, NewID: uuid.NewString, PublicURL: "ftp://berth.example"},
	} {
		if _, err := app.New(c); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
	if _, err := app.New(app.Config{Store: store, Box: box, NewID: uuid.NewString, PublicURL: public + "/"}); err != nil {
		t.Fatalf("a complete configuration: %v", err)
	}
}
