// Package sealbox encrypts secrets at rest (app private keys, payment-provider secrets) with
// AES-256-GCM under a key from the environment, so a database dump alone yields neither the keys
// that sign tenant tokens nor the keys that move money.
package sealbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/fault"
)

// KeySize is the required key length: AES-256.
const KeySize = 32

// Box seals and opens secrets. It is safe for concurrent use.
type Box struct {
	aead cipher.AEAD
}

// KeyHint ends the refusal of a missing or bad key setting (this one, apikey.PepperSetting):
// berthctl gen-secrets prints fresh values in the form the settings accept.
const KeyHint = "make one with: berthctl gen-secrets"

// KeySetting declares the deployment's sealing key, which the modules that keep secrets at rest read.
var KeySetting = config.Setting{Name: "BERTH_SECRET_KEY", Kind: config.Key, Size: KeySize, Required: true, Secret: true,
	Doc:  "AES-256-GCM key sealing the secrets a module keeps at rest (signing keys, provider secrets); it must outlive every process",
	Hint: KeyHint}

// SealedWith is what a database holding sealed secrets was made with, for the refusal of another
// key at start (pgxx.CheckKeys).
const SealedWith = "the key this database was sealed with"

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("sealbox: key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("sealbox: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("sealbox: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain with a random nonce (prepended to the result). owner is authenticated but not
// stored: a sealed secret copied to another owner's row does not open.
func (b *Box) Seal(plain []byte, owner string) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("sealbox: nonce: %w", err)
	}
	return b.aead.Seal(nonce, nonce, plain, []byte(owner)), nil
}

// ErrOpen is returned for a sealed value that was tampered with, sealed under another key or
// for another owner.
var ErrOpen = fault.Internal(errors.New("sealbox: cannot open sealed value"))

// Open decrypts a value produced by Seal for the same owner.
func (b *Box) Open(sealed []byte, owner string) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], []byte(owner))
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
