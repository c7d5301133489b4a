// Package browsertest drives a real headless Chromium from Go tests, for
// the console's browser tests: it starts the browser, opens tabs, fails
// the test on any JavaScript exception or console.error in the page, and
// saves screenshots under a test output directory.
//
// The browser is Debian's chromium (/usr/bin/chromium), or the program
// named by CHIME_CHROMIUM. Without one the test is skipped with a message,
// except under CI=true, where a missing browser is a failure. Screenshots go
// to $CHIME_TEST_OUTPUT_DIR/console (default: chime-test-output/console in
// the system's temporary directory).
package browsertest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Timeout bounds one Run: generous, because the machines that run the
// tests are small and shared.
const Timeout = 60 * time.Second

// Browser starts headless Chromium processes for one test.
type Browser struct {
	path   string
	outDir string
}

// chromiumPath finds the browser: CHIME_CHROMIUM, then the usual names.
func chromiumPath() string {
	if p := os.Getenv("CHIME_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// OutputDir is where screenshots are saved.
func OutputDir() string {
	base := os.Getenv("CHIME_TEST_OUTPUT_DIR")
	if base == "" {
		base = filepath.Join(os.TempDir(), "chime-test-output")
	}
	return filepath.Join(base, "console")
}

// New starts a headless Chromium that stops when the test ends. With
// go test -short it skips the test instead: browser tests are the slow kind.
func New(t testing.TB) *Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: skipped with -short")
	}
	path := chromiumPath()
	if path == "" {
		const msg = "needs Chromium: apt-get install -y chromium, or set CHIME_CHROMIUM"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	out := OutputDir()
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	return &Browser{path: path, outDir: out}
}

// Page is one browser tab.
type Page struct {
	t      testing.TB
	ctx    context.Context
	outDir string

	mu     sync.Mutex
	errors []string
}

// NewPage starts a browser with a profile of its own (so its cookies and
// session are its own) and opens a tab. When the test ends, the browser
// stops and the test fails if the page threw an exception or called
// console.error.
func (b *Browser) NewPage(t testing.TB) *Page {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(b.path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("window-size", "1280,900"),
		chromedp.UserDataDir(profileDir(t)),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	p := &Page{t: t, ctx: ctx, outDir: b.outDir}
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			p.recordError((&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					if a.Description != "" {
						parts = append(parts, a.Description)
					} else {
						parts = append(parts, string(a.Value))
					}
				}
				p.recordError("console.error: " + strings.Join(parts, " "))
			}
		}
	})
	if err != nil {
		cancel()
		t.Fatalf("browsertest: starting chromium: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, e := range p.errors {
			t.Errorf("browsertest: the page logged %s", e)
		}
	})
	return p
}

// profileDir makes a browser profile directory that is removed when the
// test ends. Not t.TempDir: Chromium's helper processes can still write
// there for a moment after it stops, so the removal is retried.
func profileDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "chime-browser-")
	if err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	t.Cleanup(func() {
		for range 50 {
			if err := os.RemoveAll(dir); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}

func (p *Page) recordError(e string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errors = append(p.errors, e)
}

// Context is the tab's chromedp context, for actions this package does
// not wrap.
func (p *Page) Context() context.Context { return p.ctx }

// Do runs steps in the tab within Timeout. On failure it saves a
// screenshot named after the test and fails the test, saying what was
// being done.
func (p *Page) Do(doing string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.fail(doing, err)
	}
}

// Get runs one action that returns a value, within Timeout, failing the
// test as Do does.
func Get[T any](p *Page, doing string, a chromedp.Action[T]) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		p.fail(doing, err)
	}
	return v
}

func (p *Page) fail(doing string, err error) {
	p.t.Helper()
	name := "FAILED-" + safeName(p.t.Name()) + ".png"
	where := p.save(name)
	var url string
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	url, _ = chromedp.Run(ctx, chromedp.Location())
	p.t.Fatalf("browser: %s: %v (at %s; screenshot %s)", doing, err, url, where)
}

// Screenshot saves a full-page PNG of the tab as name.png in the output
// directory and returns its path.
func (p *Page) Screenshot(name string) string {
	p.t.Helper()
	path := p.save(safeName(name) + ".png")
	if path == "" {
		p.t.Fatalf("browser: screenshot %s failed", name)
	}
	p.t.Logf("screenshot %s", path)
	return path
}

func (p *Page) save(name string) string {
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	// From the top: a page scrolled down would show the sticky top bar
	// in the middle of the full-page image.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(window.scrollTo(0, 0), true)`)); err != nil {
		return ""
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return ""
	}
	path := filepath.Join(p.outDir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return ""
	}
	return path
}

// Text returns the visible text of the first element matching the CSS
// selector sel, once it is visible.
func (p *Page) Text(sel string) string {
	p.t.Helper()
	p.Do("waiting for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
	return Get(p, "reading "+sel, chromedp.Text(chromedp.CSS(sel)))
}

// WaitText waits until the first element matching sel shows text
// containing want, and returns that text.
func (p *Page) WaitText(sel, want string) string {
	p.t.Helper()
	return Get(p, fmt.Sprintf("waiting for %q in %s", want, sel), chromedp.Poll[string](
		fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e && e.innerText.includes(%q) ? e.innerText : null; })()`, sel, want),
		chromedp.WithPollingInterval(100*time.Millisecond)))
}

// Count returns how many elements match sel right now.
func (p *Page) Count(sel string) int {
	p.t.Helper()
	return Get(p, "counting "+sel, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
}

// Click clicks the first element matching sel once it is visible.
func (p *Page) Click(sel string) {
	p.t.Helper()
	p.Do("clicking "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

// ClickText clicks the first element matching sel whose text contains text,
// such as ClickText("button", "Run now").
func (p *Page) ClickText(sel, text string) {
	p.t.Helper()
	js := fmt.Sprintf(`(() => { const e = [...document.querySelectorAll(%q)].find(e => e.offsetParent !== null && e.innerText.includes(%q)); if (!e) return false; e.scrollIntoView({block: 'center'}); e.click(); return true; })()`, sel, text)
	Get(p, fmt.Sprintf("clicking %s %q", sel, text), chromedp.Poll[bool](js, chromedp.WithPollingInterval(100*time.Millisecond)))
}

// Fill replaces the value of the input matching sel with v, typed as the
// user would (key and input events fire). It empties the input through
// its value property first: clearing the value attribute no longer
// changes what an input shows once someone has typed in it.
func (p *Page) Fill(sel, v string) {
	p.t.Helper()
	p.Do("waiting for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
	Get(p, "emptying "+sel, chromedp.Evaluate[bool](fmt.Sprintf(
		`(() => { const e = document.querySelector(%q); e.value = ''; e.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`, sel)))
	if v != "" {
		p.Do("typing into "+sel, chromedp.SendKeys(chromedp.CSS(sel), v))
	}
}

// Keys sends keystrokes to the focused element, as a keyboard would:
// text, or keys of github.com/chromedp/chromedp/kb such as kb.Tab and
// kb.Enter.
func (p *Page) Keys(doing, keys string) {
	p.t.Helper()
	p.Do(doing, chromedp.KeyEvent(keys))
}

// Focused describes the focused element: its tag, name or text, for
// keyboard tests.
func (p *Page) Focused() string {
	p.t.Helper()
	return Get(p, "reading the focused element", chromedp.Evaluate[string](
		`(() => { const e = document.activeElement; if (!e) return ''; return e.tagName.toLowerCase() + ' ' + (e.getAttribute('name') || e.innerText || '').trim().slice(0, 60); })()`))
}

// Navigate opens url and waits for the console to render a page.
func (p *Page) Navigate(url string) {
	p.t.Helper()
	p.Do("opening "+url, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("main")))
}

// Route opens a console route such as "/jobs" in the current page (it
// changes the URL's fragment) and waits until the console has rendered
// the page it settled on: that route's, or the one it redirected to (the
// login page). The console marks main with data-page once a page has
// rendered.
func (p *Page) Route(route string) {
	p.t.Helper()
	Get(p, "opening #"+route, chromedp.Evaluate[bool](fmt.Sprintf(`(location.hash = %q, true)`, "#"+route)))
	Get(p, "waiting for #"+route+" to render", chromedp.Poll[bool](
		`(() => { const m = document.querySelector('main'); return !!m && m.dataset.page === location.hash.slice(1); })()`,
		chromedp.WithPollingInterval(100*time.Millisecond)))
}

// Login opens the console at base and logs in; the console then shows
// route (the dashboard when route is "").
func (p *Page) Login(base, route, user, password string) {
	p.t.Helper()
	if route == "" {
		route = "/"
	}
	p.Navigate(base + "/#/login?next=" + url.QueryEscape(route))
	p.Do("logging in as "+user,
		chromedp.WaitVisible(chromedp.CSS(`input[name="username"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="username"]`), user),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), password),
		chromedp.Click(chromedp.CSS(`form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="whoami"]`)),
	)
}

// SetViewport resizes the tab: a phone when mobile, else a desktop window.
func (p *Page) SetViewport(width, height int64, mobile bool) {
	p.t.Helper()
	var opts []chromedp.EmulateViewportOption
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
	}
	p.Do("resizing the viewport", chromedp.EmulateViewport(width, height, opts...))
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}
