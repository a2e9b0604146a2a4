package testkit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// VerifyStandardWebhook checks a delivery as a receiver following the Standard Webhooks
// specification does, written here from the specification rather than with Berth's signer, so a
// test that uses it checks the signer against the specification: the webhook-signature header
// holds a space-separated list of "v1,<base64 HMAC-SHA256 of id.timestamp.body>" under the
// secret's key (base64 after "whsec_").
func VerifyStandardWebhook(secret, id, timestamp string, body []byte, header string) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(header) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}
