package seed

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// DefaultDir is BERTH_DEMO_DIR's default, relative to the run's working directory; berthctl looks
// for it in its own working directory and that directory's ancestors.
const DefaultDir = ".berth"

// FileName is the file in BERTH_DEMO_DIR (.berth/ by default) that the all-in-one run describes
// itself in. .berth/ is git-ignored development state: the file holds the run's admin token and the
// demo's API keys, which is why it is written for its owner alone.
const FileName = "demo.json"

// File is what demo.json holds: the seeded demo, and how to reach the run's admin APIs, so that
// berthctl finds a running `make run` without flags.
type File struct {
	Demo
	// AdminToken is the run's BERTH_ADMIN_TOKEN (random per run unless set).
	AdminToken string `json:"adminToken"`
	// GRPC maps each module's name to the address it serves gRPC on.
	GRPC map[string]string `json:"grpc"`
}

// WriteFile writes f to dir/demo.json, creating dir, and returns the file's path.
func WriteFile(dir string, f File) (string, error) {
	path := filepath.Join(dir, FileName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, append(b, '\n'), 0o600)
}

// ReadFile reads a demo.json WriteFile wrote.
func ReadFile(path string) (File, error) {
	var f File
	b, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
