package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// shBlock is a fenced shell block of a Markdown page.
var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// grpcAddr finds a module's gRPC address in the start-up banner.
var grpcAddr = regexp.MustCompile(`(identity|tenant|analytics|billing|webhook) (127\.0\.0\.1:\d+)`)

// browser stands in for the person in the quick start: sign_up opens the hosted page, submits
// the sign-up form, opens the verification mail's link from the development mailbox, confirms, and
// prints the code the verified page continues to; pay opens the payment page and pays on the pspx
// sandbox's checkout page with the test card. The page's $WORK folder goes at the end.
const browser = `
trap 'rm -rf "${WORK:-}"' EXIT
hidden_fields() {
  grep -o '<input type="hidden" name="[a-z_]*" value="[^"]*"' |
    sed 's/.*name="\([a-z_]*\)" value="\([^"]*\)"/-d \1=\2/' | tr '\n' ' '
}
sign_up() {
  local jar form email link
  jar=$(mktemp)
  email=quick-$RANDOM@example.com
  form=$(curl -s -c "$jar" -b "$jar" "$1" | hidden_fields)
  curl -s -o /dev/null -c "$jar" -b "$jar" $form -d name=Quick \
    --data-urlencode email=$email --data-urlencode 'password=correct horse battery' "$BASE/login"
  link=$(curl -s "$BASE/dev/mailbox?format=json" | jq -r --arg to "$email" 'map(select(.to == $to))[0].text' |
    grep -o "$BASE/login/verify?token=[A-Za-z0-9_-]*")
  form=$(curl -s -c "$jar" -b "$jar" "$link" | hidden_fields)
  curl -s -c "$jar" -b "$jar" $form "$BASE/login/verify" | grep -o 'url=[^"]*' | sed 's/.*[?&;]code=\([^&]*\).*/\1/'
}
pay() {
  local checkout
  checkout=$(curl -s -o /dev/null -w '%{redirect_url}' "$1")
  curl -s -o /dev/null -w '%{redirect_url}' -d card_number='4242 4242 4242 4242' -d 'card_expiry=12 / 30' -d card_cvc=123 "$checkout" |
    xargs curl -s -o /dev/null -w 'payment returned to %{redirect_url}\n'
}
`

// TestTheQuickStartsCommandsWorkAsWritten runs the shell blocks of docs/quickstart.md in order
// against the real binary, as a reader pastes them, with a scripted browser for the two steps that
// need one (signing up on the hosted page, paying on the sandbox's page). Only what ties the page
// to a reader's machine changes: the edge's and services' addresses (free ports here), berthctl
// (built once instead of go run) and the npm install of the example app (left out).
func TestTheQuickStartsCommandsWorkAsWritten(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			stacktest.Unavailable(t, "%s is not installed", tool)
		}
	}
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "quickstart.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	berth, berthctl := filepath.Join(dir, "berth"), filepath.Join(dir, "berthctl")
	for bin, pkg := range map[string]string{berth: ".", berthctl: "../berthctl"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
	}
	cmd := exec.Command(berth)
	cmd.Dir = dir // the page reads .berth/demo.json from the current folder
	cmd.Env = append(os.Environ(), "BERTH_ADMIN_TOKEN=dev-admin-token", "BERTH_HTTP_ADDR=127.0.0.1:0",
		"BERTH_IDENTITY_GRPC_ADDR=127.0.0.1:0", "BERTH_TENANT_GRPC_ADDR=127.0.0.1:0", "BERTH_ANALYTICS_GRPC_ADDR=127.0.0.1:0",
		"BERTH_BILLING_GRPC_ADDR=127.0.0.1:0", "BERTH_WEBHOOK_GRPC_ADDR=127.0.0.1:0",
		"BERTH_NATS_URL=", "BERTH_DATABASE_URL=", "BERTH_LOG_LEVEL=error")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	banner := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "Berth is running at ") {
				banner <- line
			}
		}
	}()
	var running string
	select {
	case running = <-banner:
	case <-time.After(90 * time.Second):
		t.Fatal("berth did not start within 90s")
	}
	base := strings.Fields(strings.TrimPrefix(running, "Berth is running at "))[0]
	env := os.Environ()
	for _, m := range grpcAddr.FindAllStringSubmatch(running, -1) {
		env = append(env, "BERTH_"+strings.ToUpper(m[1])+"_GRPC_ADDR="+m[2])
	}

	script := []string{"set -eu -o pipefail", browser}
	for _, m := range shBlock.FindAllStringSubmatch(string(page), -1) {
		block := strings.ReplaceAll(m[1], "http://127.0.0.1:8080", base)
		block = strings.ReplaceAll(block, "go run ./cmd/berthctl", berthctl)
		block = strings.ReplaceAll(block, "CODE=paste-the-code-here", `CODE=$SIGNED_UP_CODE`)
		switch {
		case strings.Contains(block, "go run ./cmd/berth\n"), strings.Contains(block, "npm ci"):
			continue // starting Berth is done above; the example app has its own test
		case strings.Contains(block, "/login?client_id="):
			// The block prints the address the reader opens; a group, not a subshell, keeps its
			// variables for the blocks after it.
			script = append(script, "{\n"+block+`} > "$WORK/printed"`, `cat "$WORK/printed"`, `SIGNED_UP_CODE=$(sign_up "$(cat "$WORK/printed")")`)
			continue
		case strings.Contains(block, "nextAction.url"):
			script = append(script, "{\n"+block+`} > "$WORK/printed"`, `pay "$(cat "$WORK/printed")"`)
			continue
		}
		script = append(script, block)
	}
	run := exec.Command("bash", "-c", strings.Join(script, "\n"))
	run.Dir, run.Env = dir, env
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the quick start's commands failed: %v\n%s", err, out)
	}
	for _, want := range []string{
		`"quick-`,                  // /v1/users/me answered the signed-up user's email
		`"message":"User updated"`, // the write key changed the user
		"Verified OK",              // the token's signature checked against route 15's key
		"status=completed",         // the sandbox payment came back completed
		`"mode": "subscription"`,   // and the tenant is on a subscription
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the quick start's output lacks %q:\n%s", want, out)
		}
	}
}
