package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// Sign returns the webhook-signature header of a delivery: "v1,<base64 HMAC-SHA256>" of
// "id.timestamp.body" under each secret, separated by spaces (two during a rotation's overlap).
func Sign(id string, at time.Time, body []byte, secrets ...string) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := secretKey(s)
		if err != nil {
			return "", err
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + strconv.FormatInt(at.Unix(), 10) + "."))
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// Verify reports whether header holds a valid signature of the delivery under secret, comparing
// in constant time. It is what a receiver does, kept here to test Sign against and for the docs.
func Verify(secret, id, timestamp string, body []byte, header string) bool {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return false
	}
	want, err := Sign(id, time.Unix(ts, 0), body, secret)
	if err != nil {
		return false
	}
	ok := false
	for _, got := range strings.Fields(header) {
		if hmac.Equal([]byte(got), []byte(want)) {
			ok = true
		}
	}
	return ok
}
