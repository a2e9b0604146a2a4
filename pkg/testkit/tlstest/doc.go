// Package tlstest makes a throwaway certificate authority and certificates for tests of Berth's
// gRPC over TLS: PEM files in the test's temporary directory, the way a deployment names them in
// its environment.
package tlstest
