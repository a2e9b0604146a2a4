package grpcx

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/berthhq/berth/pkg/config"
)

// The environment that turns on TLS for Berth's gRPC (between services, from the edge, from
// berthctl). Files in PEM; they are read once at start: rotate certificates by restarting.
const (
	EnvTLSCA   = "BERTH_GRPC_TLS_CA"   // the CA that signs every Berth process's certificate
	EnvTLSCert = "BERTH_GRPC_TLS_CERT" // this process's certificate: served, and presented on service calls
	EnvTLSKey  = "BERTH_GRPC_TLS_KEY"  // its private key
)

// TLS is a deployment's gRPC transport security. A nil *TLS means plaintext (the development
// default and the all-in-one process). With TLS, servers present their certificate and ask for a
// client's; callers verify servers against the CA; calls that carry the service token present
// this process's certificate, and servers refuse such calls without one the CA signed (mutual TLS
// between services). Callers with other credentials (API keys, tokens, the admin token) need only
// the CA.
type TLS struct {
	ca   *x509.CertPool
	cert *tls.Certificate // nil for a client-only process (berthctl)
}

// TLSSettings declare the three TLS variables TLSFromEnv reads.
var TLSSettings = []config.Setting{
	{Name: EnvTLSCA, Kind: config.Text, Doc: "PEM file of the CA that signs every Berth process's certificate: gRPC between processes goes over TLS, service calls with mutual TLS (unset: plaintext on a private network)"},
	{Name: EnvTLSCert, Kind: config.Text, Doc: "PEM file of this process's certificate, served and presented on service calls (with " + EnvTLSKey + ")"},
	{Name: EnvTLSKey, Kind: config.Text, Secret: true, Doc: "PEM file of the certificate's private key"},
}

// TLSFromEnv reads the TLS settings: none set is plaintext (nil); the CA alone makes a client
// that verifies servers; the CA with a certificate and key makes a process that can also serve
// and call as a service. Any other combination, or a file that does not load, is an error, so a
// half-configured process never falls back to plaintext.
func TLSFromEnv(env config.Env) (*TLS, error) {
	ca, cert, key := env.String(EnvTLSCA, ""), env.String(EnvTLSCert, ""), env.String(EnvTLSKey, "")
	switch {
	case ca == "" && cert == "" && key == "":
		return nil, nil
	case ca == "":
		return nil, fmt.Errorf("%s is required with %s and %s", EnvTLSCA, EnvTLSCert, EnvTLSKey)
	case (cert == "") != (key == ""):
		return nil, fmt.Errorf("%s and %s go together", EnvTLSCert, EnvTLSKey)
	}
	return LoadTLS(ca, cert, key)
}

// LoadTLS loads a CA bundle and, unless certFile is "", a certificate and its key.
func LoadTLS(caFile, certFile, keyFile string) (*TLS, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("grpc TLS CA: %w", err)
	}
	t := &TLS{ca: x509.NewCertPool()}
	if !t.ca.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("grpc TLS CA: %s holds no PEM certificate", caFile)
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("grpc TLS certificate: %w", err)
		}
		t.cert = &cert
	}
	return t, nil
}

// CanServe reports whether the process has a certificate to serve with.
func (t *TLS) CanServe() bool { return t != nil && t.cert != nil }

// serverCredentials are a server's transport credentials: plaintext without TLS. Client
// certificates are asked for and verified when sent, not required: only service calls need one,
// which the access policy checks per call (ServiceCertificate).
func (t *TLS) serverCredentials() (credentials.TransportCredentials, error) {
	if t == nil {
		return insecure.NewCredentials(), nil
	}
	if t.cert == nil {
		return nil, errors.New("grpc TLS: serving needs " + EnvTLSCert + " and " + EnvTLSKey)
	}
	return credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{*t.cert},
		ClientCAs:    t.ca,
		ClientAuth:   tls.VerifyClientCertIfGiven,
		MinVersion:   tls.VersionTLS12,
	}), nil
}

// clientCredentials are a caller's transport credentials: its certificate is presented when
// asService and the process has one.
func (t *TLS) clientCredentials(asService bool) credentials.TransportCredentials {
	if t == nil {
		return insecure.NewCredentials()
	}
	c := &tls.Config{RootCAs: t.ca, MinVersion: tls.VersionTLS12}
	if asService && t.cert != nil {
		c.Certificates = []tls.Certificate{*t.cert}
	}
	return credentials.NewTLS(c)
}
