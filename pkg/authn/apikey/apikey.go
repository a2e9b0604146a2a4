// Package apikey defines the API-key format and how keys are stored. A key reads
// "berth_<32 hex id>_<64 hex secret>", where the id is the key's UUID (the `uuid` of the API key
// item) without dashes: it finds the stored record without scanning. Only
// HMAC-SHA256(pepper, secret) is stored, so a leaked database alone cannot produce a usable key.
package apikey

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/sealbox"
)

// PepperSetting declares the deployment's pepper of the stored hashes (Hash), which the identity
// service reads and berthctl gen-secrets makes.
var PepperSetting = config.Setting{Name: "BERTH_API_KEY_PEPPER", Kind: config.Key, Required: true, Secret: true,
	Doc: "HMAC pepper of the stored API-key hashes; changing it invalidates every API key", Hint: sealbox.KeyHint}

const (
	prefix    = "berth_"
	idHexLen  = 32
	secretLen = 32
)

// Generate mints a new key and returns its id, its secret and the full key handed to the operator.
func Generate() (id, secret, full string, err error) {
	uid, err := uuid.NewRandom()
	if err != nil {
		return "", "", "", err
	}
	buf := make([]byte, secretLen)
	if _, err = rand.Read(buf); err != nil {
		return "", "", "", err
	}
	secret = hex.EncodeToString(buf)
	return uid.String(), secret, prefix + hex.EncodeToString(uid[:]) + "_" + secret, nil
}

// Parse splits a presented key. ok is false for anything not of the exact format, which callers
// answer as invalid credentials without touching the store.
func Parse(full string) (id, secret string, ok bool) {
	rest, found := strings.CutPrefix(full, prefix)
	if !found {
		return "", "", false
	}
	rawID, secret, found := strings.Cut(rest, "_")
	if !found || len(rawID) != idHexLen || len(secret) != 2*secretLen || !isHex(rawID) || !isHex(secret) {
		return "", "", false
	}
	uid, err := uuid.Parse(rawID)
	if err != nil {
		return "", "", false
	}
	return uid.String(), secret, true
}

// Hash is what the store keeps for a secret.
func Hash(pepper []byte, secret string) []byte {
	m := hmac.New(sha256.New, pepper)
	m.Write([]byte(secret))
	return m.Sum(nil)
}

// Matches compares a presented secret with a stored hash in constant time.
func Matches(pepper []byte, secret string, stored []byte) bool {
	return hmac.Equal(Hash(pepper, secret), stored)
}

func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
