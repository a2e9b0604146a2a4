// Package config reads settings from the environment, the only configuration source of Berth
// processes (twelve-factor), with defaults that suit the embedded all-in-one run.
package config

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// String returns the variable or def when it is unset or blank.
func String(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

// Int returns the variable as an integer, def when unset.
func Int(name string, def int) (int, error) {
	v := String(name, "")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s: not an integer", name)
	}
	return n, nil
}

// Duration returns the variable as a Go duration ("30s"), def when unset.
func Duration(name string, def time.Duration) (time.Duration, error) {
	v := String(name, "")
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s: not a duration", name)
	}
	return d, nil
}

// Bytes decodes a secret given as hex or standard/URL base64; nil when unset. The value itself never
// appears in the error, so a misconfigured secret cannot leak into logs.
func Bytes(name string) ([]byte, error) {
	v := String(name, "")
	if v == "" {
		return nil, nil
	}
	if b, err := hex.DecodeString(v); err == nil {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%s: neither hex nor base64", name)
}
