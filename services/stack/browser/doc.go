// Package browser holds the browser test: it starts the whole stack, opens the hosted login page in
// headless Chromium, signs up through the real form and follows the redirect to a test app, which
// then exchanges the authorization code for tokens over HTTP — the path a real user and app take.
//
// The test needs Chromium at /usr/bin/chromium. When it is missing and the test runs as root, it
// installs it with apt-get; otherwise it skips, or fails under CI=true.
package browser
