package stacktest_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	"github.com/berthhq/berth/pkg/grpcx"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"google.golang.org/grpc"
)

// BenchmarkSignUpAnswerTime is a sign-up under the required verification policy, the step the
// hosted page calls, with an address that is already registered (the baseline) and with a new one,
// on PostgreSQL when TEST_DATABASE_URL is set. Both answer the same page; the ratio printed by
// `make bench` is how much longer a new address takes, which should be 1.00: anything else tells
// a visitor which addresses have accounts.
func BenchmarkSignUpAnswerTime(b *testing.B) {
	env := stacktest.StartWith(b, stacktest.Options{Issuer: "bench", RedirectURI: "http://127.0.0.1:1/callback",
		EmailVerification: "required", Postgres: os.Getenv("TEST_DATABASE_URL") != ""})
	conn, err := grpc.NewClient(env.Stack.Addr("identity"), append(grpcx.ClientOptions("", env.Stack.TLS),
		grpc.WithChainUnaryInterceptor(grpcx.ServiceTokenInterceptor(env.ServiceToken)))...)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	login := identityv1.NewLoginServiceClient(conn)
	var n atomic.Int64
	signUp := func(b *testing.B, email string) {
		// Each from its own client address, so the sign-up limits per address never refuse one.
		i := n.Add(1)
		_, err := login.SignUp(context.Background(), &identityv1.SignUpRequest{
			Params: &identityv1.LoginParams{ClientId: env.App.AppID, RedirectUri: "http://127.0.0.1:1/callback", State: "s", Nonce: "n"},
			Email:  email, Password: "a long enough bench password", Name: "Bench",
			ClientIp: fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), UserAgent: "bench",
		})
		if err != nil {
			b.Fatalf("sign-up of %s: %v", email, err)
		}
	}
	registered := "registered-" + stacktest.RandomHex(4) + "@example.com"
	signUp(b, registered)

	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			signUp(b, registered)
		}
	})
	b.Run("new-address", func(b *testing.B) {
		for b.Loop() {
			signUp(b, "new-"+stacktest.RandomHex(8)+"@example.com")
		}
	})
}
