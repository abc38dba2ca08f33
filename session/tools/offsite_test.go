package tools

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/tools/grants"
	"github.com/infer-workspace/infer/sim/fakebrowser"
)

// simDriver drives the simulator's fake browser as the bridge would drive
// the extension, for the few actions these tests use.
type simDriver struct{ b *fakebrowser.Browser }

func (d simDriver) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	r := d.b.Do(ctx, wire.BrowserCommand{ID: "1", Action: cmd.Action, URL: cmd.URL, Selector: cmd.Selector, Text: cmd.Text, PressEnter: cmd.PressEnter})
	if r.Error != "" {
		return browser.Result{}, errors.New(r.Error)
	}
	res := browser.Result{URL: r.URL, Title: r.Title}
	if r.Content != nil {
		res.Content = *r.Content
	}
	if r.Image != "" {
		res.Image, _ = base64.StdEncoding.DecodeString(r.Image)
		res.ImageMIME = r.ImageMIMEType
	}
	return res, nil
}

// serveOn serves h on addr (a loopback address) until the test ends, and
// returns its http://host:port origin.
func serveOn(t *testing.T, addr string, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp4", addr+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: h}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); wg.Wait() })
	return "http://" + ln.Addr().String()
}

// TestSiteGrantDoesNotFollowRedirects grants BrowserNavigate on host-a
// (127.0.0.1), which redirects to host-b (127.0.0.2): the navigation runs
// without asking, but the agent gets nothing of host-b's page, the person
// is warned, and reading the tab afterwards asks the person.
func TestSiteGrantDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	hostB := serveOn(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html><head><title>B says "+r.URL.Query().Get("d")+"</title></head><body>host-b private text</body></html>")
	}))
	hostA := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		io.WriteString(w, "<html><head><title>A home</title></head><body>host-a text</body></html>")
	}))
	fb, err := fakebrowser.New(fakebrowser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fb.Close() })

	a := &scriptedApprover{decision: Decision{Kind: Deny, Reason: "no"}}
	p, env, store := newTestPipeline(t, a, nil)
	env.Browser = simDriver{fb}
	if _, err := store.Add(grants.Grant{Kind: grants.KindSite, Tool: "BrowserNavigate", Site: hostA}); err != nil {
		t.Fatal(err)
	}
	nav := func(u string) Outcome {
		return p.Run(context.Background(), Call{ID: "n", Name: "BrowserNavigate", Args: fmt.Sprintf(`{"url": %q}`, u), Origin: OriginAgent}, Standard)
	}

	// On the site, the grant covers the navigation as before.
	out := nav(hostA + "/")
	if !out.Success || !strings.Contains(out.Output, "A home") || out.Warning != "" {
		t.Fatalf("on-site navigation: %+v", out)
	}

	leak := hostB + "/leak?d=s3cr3t"
	out = nav(hostA + "/redirect?to=" + leak)
	if a.count() != 0 {
		t.Fatalf("the granted navigation asked the person")
	}
	if out.Success || strings.Contains(out.Output, "B says") || strings.Contains(out.Output, "s3cr3t") {
		t.Errorf("the agent was shown the page off the granted site: %+v", out)
	}
	if !strings.Contains(out.Output, "ended on "+hostB) || !strings.Contains(out.Output, "Nothing of that page is shown") {
		t.Errorf("the result does not say where it ended: %q", out.Output)
	}
	if !strings.Contains(out.Warning, "ended on "+hostB) || !strings.Contains(out.Warning, hostA) {
		t.Errorf("the person is not told: %q", out.Warning)
	}

	// Reading the tab now asks the person (who says no here).
	read := p.Run(context.Background(), Call{ID: "r", Name: "BrowserRead", Args: `{}`, Origin: OriginAgent}, Standard)
	if read.Ran || strings.Contains(read.Output, "host-b private text") || a.count() != 1 {
		t.Fatalf("the off-site page was read without asking: %+v", read)
	}
	if req := a.last(); !strings.Contains(req.Why, hostB) {
		t.Errorf("the approval does not name the site: %q", req.Why)
	}

	// A navigation back on the site ends that.
	if out := nav(hostA + "/"); !out.Success {
		t.Fatalf("back on the site: %+v", out)
	}
	read = p.Run(context.Background(), Call{ID: "r2", Name: "BrowserRead", Args: `{}`, Origin: OriginAgent}, Standard)
	if !read.Success || !strings.Contains(read.Output, "host-a text") {
		t.Errorf("reading the granted site: %+v", read)
	}
}
