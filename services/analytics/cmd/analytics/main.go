// Command analytics runs the analytics service as its own process against PostgreSQL, NATS
// JetStream and the identity service. Besides the common settings (pkg/svcmain), it reads
// BERTH_IDENTITY_ADDR, the identity service's gRPC address (default 127.0.0.1:9101).
package main

import (
	"context"

	"github.com/berthhq/berth/pkg/svcmain"
	"github.com/berthhq/berth/services/analytics/server"
)

func main() {
	svcmain.Main("analytics", "127.0.0.1:9103", func(ctx context.Context, env *svcmain.Env) (svcmain.Process, error) {
		identity, err := env.Dial("BERTH_IDENTITY_ADDR", "127.0.0.1:9101")
		if err != nil {
			return nil, err
		}
		return server.New(ctx, server.Config{
			DatabaseURL:  env.DatabaseURL,
			Bus:          env.Bus,
			Identity:     identity,
			AdminToken:   env.AdminToken,
			ServiceToken: env.ServiceToken,
			Log:          env.Log,
		})
	})
}
