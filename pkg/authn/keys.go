package authn

import (
	"context"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// VerifiedKey is what a successful API-key check yields.
type VerifiedKey struct {
	KeyID, AppID, ProjectID string
	Type                    string // stored type: "read" or "write"
	AppEnabled              bool
}

// KeyVerifier checks a presented API key. It returns an Unauthenticated fault (pkg/fault) for an
// unknown, malformed or wrong key and when clientID is not the key's app. The claimed key type is
// the policy's business, not the verifier's.
type KeyVerifier interface {
	VerifyAPIKey(ctx context.Context, apiKey, clientID string) (VerifiedKey, error)
}

type remoteVerifier struct {
	client identityv1.IdentityInternalServiceClient
}

// NewRemoteVerifier verifies keys by asking the identity service, which alone holds key hashes.
// The client's connection must send the service token.
func NewRemoteVerifier(c identityv1.IdentityInternalServiceClient) KeyVerifier {
	return remoteVerifier{client: c}
}

func (r remoteVerifier) VerifyAPIKey(ctx context.Context, apiKey, clientID string) (VerifiedKey, error) {
	res, err := r.client.VerifyApiKey(ctx, &identityv1.VerifyApiKeyRequest{ApiKey: apiKey, ClientId: clientID})
	if err != nil {
		return VerifiedKey{}, err
	}
	return VerifiedKey{
		KeyID:      res.GetKeyId(),
		AppID:      res.GetAppId(),
		ProjectID:  res.GetProjectId(),
		Type:       res.GetType(),
		AppEnabled: res.GetAppEnabled(),
	}, nil
}
