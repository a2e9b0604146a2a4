package seed

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// dashboard creates pspx objects the way an operator's dashboard does: plain API calls with the
// account's secret key. The seed uses it for the sandbox's products, prices, tax rates and webhook
// endpoint.
type dashboard struct {
	base string
	key  string
}

// create POSTs form to path and answers the created object's id.
func (d dashboard) create(ctx context.Context, path string, form url.Values) (string, error) {
	var obj struct {
		ID string `json:"id"`
	}
	err := d.post(ctx, path, form, &obj)
	if err == nil && obj.ID == "" {
		err = fmt.Errorf("pspx %s: the answer has no id", path)
	}
	return obj.ID, err
}

// post POSTs form to path and decodes the 200 answer into out.
func (d dashboard) post(ctx context.Context, path string, form url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.key)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("pspx %s: %w", path, err)
	}
	defer func() { _ = resp.Body.Close() }() // read to the end below; nothing is lost if closing fails
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, out) != nil {
		return fmt.Errorf("pspx %s: status %d: %s", path, resp.StatusCode, body)
	}
	return nil
}

// randomAlnum returns n random letters and digits: the body of a sandbox key or secret.
func randomAlnum(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
