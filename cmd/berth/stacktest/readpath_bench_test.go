package stacktest_test

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// BenchmarkReadPathInProcess is routes 14 (GET /v1/users/:userId) and 5 (GET /v1/tenants/:tenantId)
// with a read key through the whole all-in-one stack on memory stores, a real HTTP client and server
// on loopback included, against a baseline server that checks the key with a constant-time compare,
// looks the same answer's data up in a map and writes the same envelope with encoding/json. Without a database and with one process, what it
// measures is what Berth's own layers (edge middleware, gateway, in-process gRPC and its
// interceptors, the use case, rendering) add per request; allocs/op is exact, so it also guards
// against allocation regressions that `make bench-stack`'s noisy machine figures would hide.
func BenchmarkReadPathInProcess(b *testing.B) {
	env := stacktest.Start(b, "bench", "http://127.0.0.1:1/callback")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	get := func(b *testing.B, url string) []byte {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("X-API-KEY", env.App.ReadKey)
		req.Header.Set("X-API-KEY-TYPE", "read")
		req.Header.Set("X-CLIENT-ID", env.App.AppID)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d %s %v", url, res.StatusCode, body, err)
		}
		return body
	}

	type answer struct {
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	}
	routes := []struct{ name, path, id string }{
		{"route14", "/v1/users/", env.App.UserIDs[0]},
		{"route5", "/v1/tenants/", env.App.TenantID},
	}
	answers := map[string]answer{} // by path
	for _, rt := range routes {
		var a answer
		if err := json.Unmarshal(get(b, env.Stack.BaseURL+rt.path+rt.id), &a); err != nil || a.Data["id"] != rt.id {
			b.Fatalf("berth answered %+v, %v; want the seeded %s", a, err, rt.id)
		}
		answers[rt.path+rt.id] = a
	}
	key := []byte(env.App.ReadKey)
	serve := func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-API-KEY")), key) != 1 || r.Header.Get("X-CLIENT-ID") != env.App.AppID {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		a, ok := answers[r.URL.Path]
		if !ok {
			http.Error(w, "not found", http.StatusBadRequest)
			return
		}
		body, err := json.Marshal(struct {
			Success bool           `json:"success"`
			Message string         `json:"message"`
			Error   any            `json:"error"`
			Data    map[string]any `json:"data"`
		}{true, a.Message, nil, a.Data})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/users/{userId}", serve)
	mux.HandleFunc("GET /v1/tenants/{tenantId}", serve)
	baseline := httptest.NewServer(mux)
	defer baseline.Close()

	for _, rt := range routes {
		for _, sv := range []struct{ name, url string }{{"baseline", baseline.URL}, {"berth", env.Stack.BaseURL}} {
			b.Run(rt.name+"/"+sv.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					get(b, sv.url+rt.path+rt.id)
				}
			})
		}
	}
}
