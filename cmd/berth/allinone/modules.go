package allinone

import (
	"github.com/berthhq/berth/pkg/module"
	analytics "github.com/berthhq/berth/services/analytics/server"
	billing "github.com/berthhq/berth/services/billing/server"
	identity "github.com/berthhq/berth/services/identity/server"
	outbound "github.com/berthhq/berth/services/outbound/server"
	tenant "github.com/berthhq/berth/services/tenant/server"
	webhook "github.com/berthhq/berth/services/webhook/server"
)

// Modules is Berth's list of bounded contexts: the all-in-one process starts them in this order,
// and tests hold the edge's backend table, deploy/ and the production binaries to it.
var Modules = []module.Module{identity.Module, tenant.Module, analytics.Module, billing.Module, webhook.Module, outbound.Module}
