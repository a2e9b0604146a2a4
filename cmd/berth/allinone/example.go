package allinone

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
)

// ExamplePath is the example app's page in the all-in-one run: a static page (examples/webapp)
// that signs a user in with the published browser SDK through the hosted login page and shows the
// user and tenant. It is its own app's redirect URI (DevPages' base + ExamplePath).
const ExamplePath = "/dev/example"

// sdkDist is where npm installs the published SDK's bundles inside the example's folder.
var sdkDist = filepath.Join("node_modules", "@userdocks", "web-client-sdk", "dist")

// Example serves the example app from its folder (Config.ExampleDir): the page and its script
// from the folder, the SDK from the folder's node_modules (installed with npm ci, never
// committed), and config.json naming the app the page signs in to (Use).
type Example struct {
	dir   string
	appID atomic.Pointer[string]
}

// Served reports whether the example's page is there to serve: a run from outside the checkout
// (or a test stack without the folder) has none, and then nothing links to it.
func (e *Example) Served() bool {
	if e == nil || e.dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(e.dir, "index.html"))
	return err == nil
}

// Use makes the page sign users in to appID, an app whose redirect URIs include the page's URL.
func (e *Example) Use(appID string) { e.appID.Store(&appID) }

// exampleConfig is config.json: the app, or why the page cannot work yet.
type exampleConfig struct {
	ClientID string `json:"clientId,omitempty"`
	Problem  string `json:"problem,omitempty"`
}

func (e *Example) config() exampleConfig {
	if _, err := os.Stat(filepath.Join(e.dir, sdkDist)); err != nil {
		return exampleConfig{Problem: "The browser SDK is not installed: run npm ci in " + e.dir + "."}
	}
	id := e.appID.Load()
	if id == nil {
		return exampleConfig{Problem: "No app is set up for the example yet."}
	}
	return exampleConfig{ClientID: *id}
}

// register adds the example's routes to mux. Only the named files are served: the folder also
// holds package.json and node_modules, which are nobody's business.
func (e *Example) register(mux *http.ServeMux) {
	file := func(name, contentType string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.Header().Set("Cache-Control", "no-store")
			http.ServeFile(w, r, filepath.Join(e.dir, name))
		}
	}
	page := file("index.html", "text/html; charset=utf-8")
	mux.HandleFunc("GET "+ExamplePath, func(w http.ResponseWriter, r *http.Request) {
		// Same origin only; the SDK builds its token worker from a blob: URL.
		w.Header().Set("Content-Security-Policy", "default-src 'self'; worker-src blob:; base-uri 'none'; frame-ancestors 'none'")
		page(w, r)
	})
	mux.HandleFunc("GET "+ExamplePath+"/app.js", file("app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET "+ExamplePath+"/app.css", file("app.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET "+ExamplePath+"/v1/identity-worker.js", file(filepath.Join("v1", "identity-worker.js"), "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET "+ExamplePath+"/sdk/userdocks.umd.js", file(filepath.Join(sdkDist, "userdocks.umd.js"), "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET "+ExamplePath+"/config.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(e.config()) // a failed write means the browser went away
	})
}
