package delivery

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// maxLimit bounds one page of the deliveries log.
const maxLimit = 1000

// FaultsHandler serves /_sandbox/faults: GET answers the fault set in force, POST replaces it
// with the JSON body (a Faults object; fields left out are zero) and answers the new set, DELETE
// clears it and answers the cleared set. A refused body answers 400 {"error", "field"}.
func (q *Queue) FaultsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
		case http.MethodDelete:
			q.ClearFaults()
		case http.MethodPost:
			f, ferr := decodeFaults(w, r)
			if ferr == nil {
				ferr, _ = q.SetFaults(f).(*FieldError)
			}
			if ferr != nil {
				writeJSON(w, http.StatusBadRequest, errorBody{ferr.Message, ferr.Field})
				return
			}
		default:
			w.Header().Set("Allow", "GET, POST, DELETE")
			writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "use GET, POST or DELETE"})
			return
		}
		writeJSON(w, http.StatusOK, q.Faults())
	})
}

// decodeFaults reads a fault set strictly: an unknown field or a value of the wrong type is
// refused with its name rather than ignored, so a typo never looks like a fault set in force.
func decodeFaults(w http.ResponseWriter, r *http.Request) (Faults, *FieldError) {
	var f Faults
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10))
	dec.DisallowUnknownFields()
	err := dec.Decode(&f)
	if err == nil && dec.More() {
		err = errors.New("trailing data")
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return f, nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return f, &FieldError{typeErr.Field, typeErr.Field + " has a value of the wrong type (" + typeErr.Value + ")"}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return f, &FieldError{field, "unknown field " + strconv.Quote(field) + `; the fields are provider, duplicate, reorder, delayMs, drop, failFirst and timeoutMs`}
	case errors.Is(err, io.EOF):
		return f, &FieldError{"", "the body must be a JSON object of faults, such as {\"drop\": 1}"}
	}
	return f, &FieldError{"", "the body is not a JSON object of faults: " + err.Error()}
}

// DeliveriesHandler serves GET /_sandbox/deliveries: the deliveries log, newest first, as
// {"deliveries": [...]}, filtered by the query's provider (pspx, pspy) and status (pending,
// delivered, failed) and cut to limit entries (1 to 1000, 100 by default).
func (q *Queue) DeliveriesHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "use GET"})
			return
		}
		v := r.URL.Query()
		provider, status := Provider(v.Get("provider")), Status(v.Get("status"))
		limit := 100
		if provider != "" && provider != Pspx && provider != Pspy {
			writeJSON(w, http.StatusBadRequest, errorBody{`provider must be "pspx" or "pspy"`, "provider"})
			return
		}
		if status != "" && status != Pending && status != Delivered && status != Failed {
			writeJSON(w, http.StatusBadRequest, errorBody{`status must be "pending", "delivered" or "failed"`, "status"})
			return
		}
		if s := v.Get("limit"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > maxLimit {
				writeJSON(w, http.StatusBadRequest, errorBody{"limit must be a whole number from 1 to 1000", "limit"})
				return
			}
			limit = n
		}
		out := []Delivery{}
		for _, d := range q.Deliveries() {
			if len(out) == limit {
				break
			}
			if (provider == "" || d.Provider == provider) && (status == "" || d.Status == status) {
				out = append(out, d)
			}
		}
		writeJSON(w, http.StatusOK, struct {
			Deliveries []Delivery `json:"deliveries"`
		}{out})
	})
}

type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
