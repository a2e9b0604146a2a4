package allinone

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTheExamplePageNamesItsAppOnlyOnceTheSDKIsInstalledAndAnAppIsSet(t *testing.T) {
	for _, tc := range []struct {
		name        string
		installed   bool
		app         string
		wantClient  string
		wantProblem string
	}{
		{name: "nothing yet", wantProblem: "npm ci"},
		{name: "app but no SDK", app: "app-1", wantProblem: "npm ci"},
		{name: "SDK but no app", installed: true, wantProblem: "No app"},
		{name: "SDK and app", installed: true, app: "app-1", wantClient: "app-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.installed {
				if err := os.MkdirAll(filepath.Join(dir, sdkDist), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			e := &Example{dir: dir}
			if tc.app != "" {
				e.Use(tc.app)
			}
			mux := http.NewServeMux()
			e.register(mux)
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, ExamplePath+"/config.json", nil))
			var got exampleConfig
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
				t.Fatalf("config.json = %d %q: %v", rec.Code, rec.Body, err)
			}
			if got.ClientID != tc.wantClient || !strings.Contains(got.Problem, tc.wantProblem) || (tc.wantProblem == "") != (got.Problem == "") {
				t.Errorf("config.json = %+v, want client %q and a problem mentioning %q", got, tc.wantClient, tc.wantProblem)
			}
		})
	}
}

func TestTheExampleServesItsNamedFilesAndNothingElseOfItsFolder(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"index.html", "app.js", "package.json", filepath.Join(sdkDist, "userdocks.umd.js")} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	(&Example{dir: dir}).register(mux)
	for _, tc := range []struct {
		path     string
		wantCode int
		wantBody string
	}{
		{ExamplePath, http.StatusOK, "index.html"},
		{ExamplePath + "/app.js", http.StatusOK, "app.js"},
		{ExamplePath + "/sdk/userdocks.umd.js", http.StatusOK, filepath.Join(sdkDist, "userdocks.umd.js")},
		{ExamplePath + "/package.json", http.StatusNotFound, ""},
		{ExamplePath + "/node_modules/@userdocks/web-client-sdk/dist/userdocks.umd.js", http.StatusNotFound, ""},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.wantCode || (tc.wantBody != "" && rec.Body.String() != tc.wantBody) {
			t.Errorf("GET %s = %d %q, want %d %q", tc.path, rec.Code, rec.Body, tc.wantCode, tc.wantBody)
		}
	}
}

// The landing page links the example app only where its page can be served: a run without the
// folder (outside the checkout, a test stack) would otherwise link a 404.
func TestTheLandingPageLinksTheExampleOnlyWhenItsPageIsThere(t *testing.T) {
	withPage := t.TempDir()
	if err := os.WriteFile(filepath.Join(withPage, "index.html"), []byte("<!doctype html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		example *Example
		linked  bool
	}{
		{"no folder", &Example{}, false},
		{"a folder without the page", &Example{dir: t.TempDir()}, false},
		{"the page", &Example{dir: withPage}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			landing(rec, "http://berth.test", nil, tc.example)
			if got := strings.Contains(rec.Body.String(), `href="`+ExamplePath+`"`); got != tc.linked {
				t.Errorf("example linked = %v, want %v", got, tc.linked)
			}
		})
	}
}
