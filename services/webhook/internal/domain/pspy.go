package domain

import (
	"encoding/json"
	"mime"
	"net/url"
)

// ParsePspyPaymentID reads the payment id of a pspy call: form-encoded (id=tr_..., what the
// provider sends) or JSON ({"id":"tr_..."}). ok is false when there is no well-formed id: such a
// call is ignored, as decided.
func ParsePspyPaymentID(contentType string, body []byte) (string, bool) {
	var id string
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/json" {
		var v struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(body, &v) != nil {
			return "", false
		}
		id = v.ID
	} else {
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return "", false
		}
		id = q.Get("id")
	}
	if len(id) > 64 || !token(id, "tr_") {
		return "", false
	}
	return id, true
}
