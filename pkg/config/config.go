// Package config reads settings from the environment, the only configuration source of Berth
// processes (twelve-factor), with defaults that suit the embedded all-in-one run.
//
// Settings are read through an Env, a lookup function, rather than os.Getenv directly: a production
// process reads its environment (OS), while the all-in-one process lays the defaults it generates
// (per-run secrets, its issuer) over that environment (Overlay) and hands the same lookup to every
// module, so a module reads its own settings the same way in both.
package config

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Env looks a setting up by name; "" means unset.
type Env func(name string) string

// OS is the process environment.
var OS Env = os.Getenv

// Overlay returns an Env that answers from values first and from base for everything else. A value
// set in base wins over an overlay value only when the overlay holds "" for it.
func Overlay(base Env, values map[string]string) Env {
	return func(name string) string {
		if v := strings.TrimSpace(base(name)); v != "" {
			return v
		}
		return values[name]
	}
}

// String returns the variable or def when it is unset or blank.
func (e Env) String(name, def string) string {
	if v := strings.TrimSpace(e(name)); v != "" {
		return v
	}
	return def
}

// Bytes decodes a secret given as hex or standard/URL base64; nil when unset. The value itself never
// appears in the error, so a misconfigured secret cannot leak into logs.
func (e Env) Bytes(name string) ([]byte, error) {
	v := e.String(name, "")
	if v == "" {
		return nil, nil
	}
	b, err := decodeKey(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// decodeKey decodes hex or standard/URL base64, padded or not.
func decodeKey(v string) ([]byte, error) {
	if b, err := hex.DecodeString(v); err == nil {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("neither hex nor base64")
}

// String reads the process environment (OS.String).
func String(name, def string) string { return OS.String(name, def) }

// Bytes reads a secret from the process environment (OS.Bytes).
func Bytes(name string) ([]byte, error) { return OS.Bytes(name) }
