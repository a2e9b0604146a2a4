package allinone

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/config"
)

func fromEnv(t *testing.T) (Config, error) {
	t.Helper()
	own, err := config.Parse(config.OS, Settings())
	if err != nil {
		return Config{}, err
	}
	return FromSettings(context.Background(), own, nil)
}

func TestTheAllInOneHonoursItsEventPrefixAndGeneratesSecretsOnMemoryStores(t *testing.T) {
	t.Setenv("BERTH_EVENT_PREFIX", "demo2")
	cfg, err := fromEnv(t)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.EventPrefix != "demo2" {
		t.Errorf("EventPrefix = %q, want the variable's", cfg.EventPrefix)
	}
	if cfg.AdminToken == "" || cfg.ServiceToken == "" || cfg.Env("BERTH_API_KEY_PEPPER") == "" || cfg.Env("BERTH_SECRET_KEY") == "" {
		t.Error("memory stores run without generated tokens or secrets")
	}
	if cfg.DatabaseURLs != nil {
		t.Errorf("DatabaseURLs = %v without BERTH_DATABASE_URL", cfg.DatabaseURLs)
	}
}

func TestTheAllInOneRefusesModulesSettingsBeforeTouchingADatabase(t *testing.T) {
	// A server nothing listens on: reaching it would fail with a connection error, not a refusal.
	t.Setenv("BERTH_DATABASE_URL", "postgres://nobody@127.0.0.1:1/berth")
	t.Setenv("BERTH_SECRET_KEY", "abc")
	_, err := fromEnv(t)
	var inv *config.InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("FromSettings = %v, want the settings refused", err)
	}
	for _, want := range []string{"BERTH_API_KEY_PEPPER is required", "BERTH_SECRET_KEY=(secret): must be 32 bytes"} {
		if strings.Count(err.Error(), want) != 1 {
			t.Errorf("the refusal should name %q once:\n%v", want, err)
		}
	}
}
