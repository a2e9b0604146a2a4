// Package sandboxproc runs the provider sandboxes (services/sandbox/cmd/sandbox) as a process of
// their own for a test package, so a service tests its provider clients against them over HTTP
// without its module requiring the sandbox module (tests/architecture holds every module to
// that). The binary is built from the workspace and started the first time a test of the package
// asks for it (Parallel or Serial), once for all of the package's tests; a package using it has
//
//	func TestMain(m *testing.M) { sandboxproc.Main(m) }
//
// which stops the process when the tests end. Building it needs the Go toolchain and the
// workspace (go.work), as `go test` inside the repository has.
//
// Tests share the process but not its data: each secret key is an account of its own at both
// sandboxes, so a test that makes its keys from Account sees only its own objects, and it gives
// the providers a WebhookURL of its own to tell its webhook deliveries apart in the shared log.
// The sandbox clock is one for the whole process, though: moving it renews every account's
// subscriptions and moves every test's notion of now. So a test that moves the clock joins with
// Serial and runs alone (it never calls t.Parallel), and the others join with Parallel: go test
// starts a package's parallel tests only once all of its serial tests have returned, so no test
// sees the clock jump under it. A second process per clock-moving test would isolate them too,
// at the cost of a start each; one process and a serial phase is as safe and cheaper.
package sandboxproc
