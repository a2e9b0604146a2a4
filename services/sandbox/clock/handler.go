package clock

import (
	"encoding/json"
	"net/http"
	"time"
)

// maxAdvance bounds one advance: ten years of renewals is more than any test needs, and a larger
// number is a typo that would make the sandbox churn through millions of periods.
const maxAdvance = 10 * 365 * 24 * time.Hour

// Handler serves the clock's control endpoint: GET answers {"now": RFC 3339}; POST
// {"seconds": N} advances the clock by N seconds (0 ≤ N ≤ ten years), runs the renewals due and
// answers the new time the same way.
func (c *Clock) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			writeJSON(w, http.StatusOK, map[string]string{"now": c.Now().Format(time.RFC3339)})
		case http.MethodPost:
			var body struct {
				Seconds *float64 `json:"seconds"`
			}
			dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&body); err != nil || body.Seconds == nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": `the body must be {"seconds": N}`})
				return
			}
			s := *body.Seconds
			if s != float64(int64(s)) || s < 0 || time.Duration(s)*time.Second > maxAdvance {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "seconds must be a whole number from 0 to 315360000"})
				return
			}
			now := c.Advance(r.Context(), time.Duration(s)*time.Second)
			writeJSON(w, http.StatusOK, map[string]string{"now": now.Format(time.RFC3339)})
		default:
			w.Header().Set("Allow", "GET, POST")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "use GET or POST"})
		}
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
