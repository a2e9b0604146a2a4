package architecture

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// largestBinary is the size above which a tracked file must be text: images and fixtures below it
// are fine, build outputs and archives above it are not.
const largestBinary = 1 << 20

// executableMagic are the first bytes of compiled programs (ELF, Mach-O both byte orders and fat,
// PE): none of them belongs in the repository whatever its size.
var executableMagic = [][]byte{
	{0x7f, 'E', 'L', 'F'},
	{0xcf, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xcf}, {0xca, 0xfe, 0xba, 0xbe},
	{'M', 'Z'},
}

// trackedFile is a path git tracks and whether its mode is executable.
type trackedFile struct {
	path       string
	executable bool
}

// TestTheRepositoryTracksNoBuildOutputs fails on a tracked compiled program, on an executable file
// that is not a script (a binary without a known header, say), and on a file over 1 MB that is not
// text: a `go build` in a command's folder followed by `git add .` must not land.
func TestTheRepositoryTracksNoBuildOutputs(t *testing.T) {
	root := repoRoot(t)
	files := trackedFiles(t, root)
	if len(files) < 100 {
		t.Fatalf("git lists %d files: the test is not looking at the repository", len(files))
	}
	for _, f := range files {
		if problem := buildOutput(filepath.Join(root, f.path), f.executable); problem != "" {
			t.Errorf("%s %s: build outputs and binaries stay out of git (.gitignore)", f.path, problem)
		}
	}
}

func TestBuildOutputsAreRecognised(t *testing.T) {
	dir := t.TempDir()
	text := bytes.Repeat([]byte("a line of text\n"), largestBinary/15+1)
	binary := bytes.Repeat([]byte{0, 1, 2, 0xff}, largestBinary/4+1)
	for _, c := range []struct {
		name       string
		content    []byte
		executable bool
		want       bool
	}{
		{"a small source file", []byte("package x\n"), false, false},
		{"a script", []byte("#!/usr/bin/env bash\necho hi\n"), true, false},
		{"a compiled program", append([]byte{0x7f, 'E', 'L', 'F'}, 2, 1, 1), false, true},
		{"an executable without a shebang", []byte("\x00\x01"), true, true},
		{"a large text file", text, false, false},
		{"a large binary file", binary, false, true},
		{"a small binary fixture", []byte{0, 1, 2, 0xff}, false, false},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.WriteFile(path, c.content, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := buildOutput(path, c.executable) != ""; got != c.want {
			t.Errorf("%s: flagged %v, want %v", c.name, got, c.want)
		}
	}
}

// buildOutput says why the file at path looks like a build output, or "".
func buildOutput(path string, executable bool) string {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "" // deleted in the work tree, not yet in the index
	} else if err != nil {
		return "cannot be read: " + err.Error()
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := f.Read(head)
	head = head[:n]
	for _, magic := range executableMagic {
		if bytes.HasPrefix(head, magic) && (len(magic) > 2 || executable) {
			return "is a compiled program"
		}
	}
	if executable && !bytes.HasPrefix(head, []byte("#!")) {
		return "is executable but not a script"
	}
	info, err := f.Stat()
	if err != nil {
		return "cannot be read: " + err.Error()
	}
	if info.Size() <= largestBinary {
		return ""
	}
	content, err := os.ReadFile(path)
	if err != nil {
		return "cannot be read: " + err.Error()
	}
	if bytes.IndexByte(content, 0) >= 0 || !utf8.Valid(content) {
		return "is over 1 MB and not text"
	}
	return ""
}

// trackedFiles lists what git tracks, with the executable bit of each.
func trackedFiles(t *testing.T, root string) []trackedFile {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-s", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git ls-files: %v", err)
		}
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	var files []trackedFile
	for _, entry := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(entry, "\t")
		if !ok {
			continue
		}
		files = append(files, trackedFile{path: path, executable: strings.HasPrefix(meta, "100755")})
	}
	return files
}

// outsidePaths are the ways a file would reach outside the repository's checkout: the folder the
// published interface document sits in beside it, or a parent of the checkout's root.
var outsidePaths = []string{"shared/spec", "../shared", "BERTH_SPEC_DIR"}

// TestNothingInTheRepositoryPointsOutsideIt keeps every test, script and page working from a
// clone alone: a file that reads or links the published interface document beside the checkout
// works only on machines that happen to hold it there.
func TestNothingInTheRepositoryPointsOutsideIt(t *testing.T) {
	root := repoRoot(t)
	self := filepath.Join("tests", "architecture", "repository_test.go")
	for _, f := range trackedFiles(t, root) {
		if f.path == self || strings.HasPrefix(f.path, "docs/history/") {
			continue
		}
		content, err := os.ReadFile(filepath.Join(root, f.path))
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(content) {
			continue
		}
		for _, p := range outsidePaths {
			if bytes.Contains(content, []byte(p)) {
				t.Errorf("%s mentions %q: a clone must hold everything its tests and pages need", f.path, p)
			}
		}
	}
}
