package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
)

// Authenticator holds one passkey for one relying party. It is not safe for concurrent use.
type Authenticator struct {
	origin, rpID string
	key          *ecdsa.PrivateKey
	id, userID   []byte
	// Counter is the signature counter the next assertion carries (after it is raised by one);
	// 0 makes an authenticator that keeps no counter, setting it lower acts out a clone.
	Counter uint32
	// NoCounter keeps the counter at 0 in every answer, as authenticators without one do.
	NoCounter bool
}

// New is an authenticator for pages served from origin (the relying party's id is its host).
func New(origin string) (*Authenticator, error) {
	u, err := url.Parse(origin)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("passkeytest: bad origin %q", origin)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	return &Authenticator{origin: u.Scheme + "://" + u.Host, rpID: u.Hostname(), key: key, id: id}, nil
}

var b64 = base64.RawURLEncoding

// publicKeyOptions is what the authenticator reads of either ceremony's options.
type publicKeyOptions struct {
	Challenge string `json:"challenge"`
	User      struct {
		ID string `json:"id"`
	} `json:"user"`
}

func readOptions(options string) (publicKeyOptions, error) {
	var o publicKeyOptions
	if err := json.Unmarshal([]byte(options), &o); err != nil || o.Challenge == "" {
		return o, fmt.Errorf("passkeytest: options without a challenge: %q", options)
	}
	return o, nil
}

func (a *Authenticator) clientData(kind, challenge string) []byte {
	raw, _ := json.Marshal(map[string]any{"type": kind, "challenge": challenge, "origin": a.origin, "crossOrigin": false})
	return raw
}

// authData is the authenticator data: the relying party's id hash, the flags (user present and
// verified, plus extra) and the counter.
func (a *Authenticator) authData(extra byte) []byte {
	rp := sha256.Sum256([]byte(a.rpID))
	out := append(rp[:], 0x01|0x04|extra)
	return binary.BigEndian.AppendUint32(out, a.Counter)
}

// Create answers navigator.credentials.create's options: the credential's JSON as the pages post
// it.
func (a *Authenticator) Create(options string) (string, error) {
	o, err := readOptions(options)
	if err != nil {
		return "", err
	}
	if a.userID, err = b64.DecodeString(o.User.ID); err != nil {
		return "", fmt.Errorf("passkeytest: user id: %w", err)
	}
	x, y := a.key.X.FillBytes(make([]byte, 32)), a.key.Y.FillBytes(make([]byte, 32))
	cose := cborMap([][2][]byte{
		{cborInt(1), cborInt(2)}, {cborInt(3), cborInt(-7)}, {cborInt(-1), cborInt(1)},
		{cborInt(-2), cborBytes(x)}, {cborInt(-3), cborBytes(y)},
	})
	data := a.authData(0x40) // attested credential data follows
	data = append(data, make([]byte, 16)...)
	data = binary.BigEndian.AppendUint16(data, uint16(len(a.id)))
	data = append(append(data, a.id...), cose...)
	attestation := cborMap([][2][]byte{
		{cborText("fmt"), cborText("none")}, {cborText("attStmt"), cborMap(nil)}, {cborText("authData"), cborBytes(data)},
	})
	return a.answer(map[string]any{
		"clientDataJSON": b64.EncodeToString(a.clientData("webauthn.create", o.Challenge)), "attestationObject": b64.EncodeToString(attestation),
	})
}

// Get answers navigator.credentials.get's options with an assertion of the passkey, its counter
// raised by one first (unless NoCounter).
func (a *Authenticator) Get(options string) (string, error) {
	o, err := readOptions(options)
	if err != nil {
		return "", err
	}
	if a.NoCounter {
		a.Counter = 0
	} else {
		a.Counter++
	}
	data := a.authData(0)
	client := a.clientData("webauthn.get", o.Challenge)
	digest := sha256.Sum256(client)
	signed := sha256.Sum256(append(append([]byte{}, data...), digest[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, signed[:])
	if err != nil {
		return "", err
	}
	return a.answer(map[string]any{
		"clientDataJSON": b64.EncodeToString(client), "authenticatorData": b64.EncodeToString(data),
		"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(a.userID),
	})
}

func (a *Authenticator) answer(response map[string]any) (string, error) {
	raw, err := json.Marshal(map[string]any{
		"id": b64.EncodeToString(a.id), "rawId": b64.EncodeToString(a.id), "type": "public-key",
		"response": response, "clientExtensionResults": map[string]any{},
	})
	return string(raw), err
}

// The little CBOR (RFC 8949) the answers need: integers, byte and text strings, maps.

func cborHead(major byte, n uint64) []byte {
	switch {
	case n < 24:
		return []byte{major<<5 | byte(n)}
	case n < 1<<8:
		return []byte{major<<5 | 24, byte(n)}
	case n < 1<<16:
		return binary.BigEndian.AppendUint16([]byte{major<<5 | 25}, uint16(n))
	default:
		return binary.BigEndian.AppendUint32([]byte{major<<5 | 26}, uint32(n))
	}
}

func cborInt(n int) []byte {
	if n < 0 {
		return cborHead(1, uint64(-1-n))
	}
	return cborHead(0, uint64(n))
}

func cborBytes(b []byte) []byte { return append(cborHead(2, uint64(len(b))), b...) }
func cborText(s string) []byte  { return append(cborHead(3, uint64(len(s))), s...) }

func cborMap(pairs [][2][]byte) []byte {
	out := cborHead(5, uint64(len(pairs)))
	for _, p := range pairs {
		out = append(append(out, p[0]...), p[1]...)
	}
	return out
}
