package module_test

import (
	"testing"

	"github.com/berthhq/berth/pkg/module"
)

func TestSettingsAndDatabasesDeriveFromTheModuleName(t *testing.T) {
	m := module.Module{Name: "billing"}
	if got := m.AddrVar(); got != "BERTH_BILLING_ADDR" {
		t.Errorf("AddrVar = %q", got)
	}
	if got := m.GRPCAddrVar(); got != "BERTH_BILLING_GRPC_ADDR" {
		t.Errorf("GRPCAddrVar = %q", got)
	}
	for base, want := range map[string]string{
		"postgres://u@db:5432/shop?sslmode=disable": "postgres://u@db:5432/shop_billing?sslmode=disable",
		"postgres://u@db:5432":                      "postgres://u@db:5432/berth_billing",
	} {
		got, err := module.DatabaseName(base, m.Name)
		if err != nil || got != want {
			t.Errorf("DatabaseName(%q) = %q, %v; want %q", base, got, err, want)
		}
	}
	if _, err := module.DatabaseName("not a url", m.Name); err == nil {
		t.Error("DatabaseName accepted a base that is not a URL")
	}
}
