package browser

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	"github.com/berthhq/berth/gateway/apidocs"
)

// recordViolations runs in every document before the page's own content: it keeps each
// Content-Security-Policy violation the document reports. DevTools-injected scripts are exempt
// from the page's policy, so it runs under default-src 'none' too.
const recordViolations = `window.__violations = [];
document.addEventListener("securitypolicyviolation", e => window.__violations.push(e.violatedDirective + " " + e.blockedURI));`

// pageTraffic is what the browser reports while it shows a page: every request it sends and every
// console entry about the Content-Security-Policy.
type pageTraffic struct {
	mu       sync.Mutex
	requests []string
	csp      []string
}

func (p *pageTraffic) listen(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, ev.Request.URL)
	case *cdplog.EventEntryAdded:
		if strings.Contains(ev.Entry.Text, "Content Security Policy") {
			p.csp = append(p.csp, ev.Entry.Text)
		}
	}
}

func (p *pageTraffic) snapshot() (requests, csp []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...), append([]string(nil), p.csp...)
}

// A person opens the API reference of the all-in-one in a browser: the page shows its title, its
// contents lead to the operations (a click lands on the operation, in view, with the fragment in
// the address bar), and it loads nothing from anywhere but its own origin and breaks no rule of
// its Content-Security-Policy — so it works offline and nothing it holds needs more.
func TestAPIReferenceInChromiumLinksItsContentsToOperationsAndStaysWithinItsPolicy(t *testing.T) {
	chromium := ensureChromium(t)
	env := stacktest.Start(t, "berth-browser-test", "https://app.example.com/callback")
	base, err := url.Parse(env.Stack.BaseURL)
	if err != nil {
		t.Fatal(err)
	}

	browser := newBrowser(t, chromium)
	var traffic pageTraffic
	if err := chromedp.Listen(browser, traffic.listen); err != nil {
		t.Fatalf("listen to the browser: %v", err)
	}
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("Network.enable: %v", err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("Log.enable: %v", err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recordViolations}); err != nil {
		t.Fatalf("Page.addScriptToEvaluateOnNewDocument: %v", err)
	}
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(env.Stack.BaseURL+apidocs.Path),
		chromedp.WaitVisible(chromedp.CSS("h1")),
	); err != nil {
		t.Fatalf("open %s: %v\npage:\n%s", apidocs.Path, err, currentPage(browser))
	}
	if title, err := chromedp.Run(ctx, chromedp.Title()); err != nil || title != "Berth API reference" {
		t.Errorf("title = %q (%v), want %q", title, err, "Berth API reference")
	}

	// Every link of the contents leads somewhere on the page; the last one is an operation far
	// below the fold, which a click must bring into view.
	broken, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#contents a")]
		.map(a => a.getAttribute("href")).filter(h => !h.startsWith("#") || !document.getElementById(h.slice(1)))`))
	if err != nil {
		t.Fatalf("read the contents: %v", err)
	}
	if len(broken) > 0 {
		t.Errorf("contents links that lead nowhere on the page: %q", broken)
	}
	target, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("#contents li a")]
		.map(a => a.getAttribute("href").slice(1)).filter(id => document.getElementById(id)?.matches("article.op")).pop() || ""`))
	if err != nil || target == "" {
		t.Fatalf("the contents link to no operation (%v)\npage:\n%s", err, currentPage(browser))
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#contents a[href="#`+target+`"]`)),
		// In view: the operation is the document's :target and its top is on screen.
		chromedp.Poll[chromedp.Void](`(() => { const el = document.getElementById(`+jsString(target)+`);
			const r = el.getBoundingClientRect();
			return el.matches(":target") && r.height > 0 && r.top >= 0 && r.top < innerHeight / 2; })()`,
			chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.WaitVisible(chromedp.CSS(`#`+target+` h3`)),
	); err != nil {
		t.Fatalf("follow the contents link to #%s: %v", target, err)
	}
	if location, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.HasSuffix(location, apidocs.Path+"#"+target) {
		t.Errorf("location after the click = %q (%v), want %s#%s", location, err, apidocs.Path, target)
	}

	violations, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__violations`))
	if err != nil {
		t.Fatalf("read the policy violations: %v", err)
	}
	requests, logged := traffic.snapshot()
	if len(violations) > 0 || len(logged) > 0 {
		t.Errorf("the page broke its Content-Security-Policy: %q %q", violations, logged)
	}
	if len(requests) == 0 {
		t.Fatal("the browser reported no request: the traffic listener is not working")
	}
	for _, r := range requests {
		u, err := url.Parse(r)
		if err != nil || u.Scheme == "data" {
			continue
		}
		if u.Scheme != base.Scheme || u.Host != base.Host {
			t.Errorf("the page requested %s, outside its origin %s", r, env.Stack.BaseURL)
		}
	}

	// The check above can fail: a stylesheet the policy does not allow is reported.
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.head.insertAdjacentHTML("beforeend", "<style>body{color:red}</style>")`),
		chromedp.Poll[chromedp.Void](`window.__violations.length > 0`, chromedp.WithPollingTimeout(5*time.Second)),
	); err != nil {
		t.Fatalf("an inline style the policy forbids was not reported, so the violation check proves nothing: %v", err)
	}
}

// jsString quotes an operation id (letters, digits, _ . -) as a JavaScript string.
func jsString(s string) string { return `"` + s + `"` }
