package domain

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
)

// App is one application of a project: its users, roles and API keys belong to it, and its key pair
// signs the tenant tokens it is issued.
type App struct {
	ID           string
	ProjectID    string
	Name         string
	Enabled      bool
	RedirectURIs []string
	// PublicKeyPEM is the current signing key's public half (SPKI PEM), served by route 15.
	PublicKeyPEM string
	// SealedPrivateKey is the PKCS#8 private key encrypted by the application layer; the domain never
	// holds the plaintext so that no store or log can leak it by accident.
	SealedPrivateKey []byte
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// KeyPair is a freshly generated signing key pair: the public half as SPKI PEM and the private half
// as PKCS#8 DER, ready to be sealed.
type KeyPair struct {
	PublicPEM  string
	PrivateDER []byte
}

// rsaBits is the signing key size: RS256 with 2048-bit keys is what the published SDKs verify.
const rsaBits = 2048

// GenerateKeyPair creates a new RSA-2048 key pair.
func GenerateKeyPair() (KeyPair, error) {
	key, err := rsa.GenerateKey(rand.Reader, rsaBits)
	if err != nil {
		return KeyPair{}, fmt.Errorf("generate rsa key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return KeyPair{}, fmt.Errorf("marshal private key: %w", err)
	}
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return KeyPair{}, fmt.Errorf("marshal public key: %w", err)
	}
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki})
	return KeyPair{PublicPEM: string(pub), PrivateDER: der}, nil
}

// NewApp validates the app's name and redirect URIs. The app starts enabled; the caller sets the key
// pair (sealed) before storing it.
func NewApp(projectID, name string, redirectURIs []string, now time.Time) (App, error) {
	name, err := requiredName("name", name)
	if err != nil {
		return App{}, err
	}
	uris := make([]string, 0, len(redirectURIs))
	for i, raw := range redirectURIs {
		if err := checkRedirectURI(raw); err != nil {
			return App{}, Invalid(fmt.Sprintf("redirectUris[%d]", i), "%s", err.Error())
		}
		uris = append(uris, raw)
	}
	now = now.UTC()
	return App{
		ID: uuid.NewString(), ProjectID: projectID, Name: name, Enabled: true,
		RedirectURIs: uris, CreatedAt: now, UpdatedAt: now,
	}, nil
}

// maxURL bounds stored URLs; browsers and providers reject much longer ones anyway.
const maxURL = 2048

// checkRedirectURI accepts absolute http(s) URLs without a fragment: OAuth forbids fragments in
// redirect URIs because the code would otherwise leak into the browser history of another page.
func checkRedirectURI(raw string) error {
	if strings.Contains(raw, "#") {
		return fmt.Errorf("must not contain a fragment")
	}
	return checkAbsoluteURL(raw)
}

// checkAbsoluteURL accepts absolute http or https URLs with a host.
func checkAbsoluteURL(raw string) error {
	if len(raw) > maxURL {
		return fmt.Errorf("must be at most %d characters", maxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("must be an absolute http or https URL")
	}
	return nil
}
