package main

// Leak canaries: secrets planted where infer meets them (a page's password
// and token inputs, a provider key and the bridge token in the
// environment) must reach none of the places infer writes or sends to: a
// model request, a conversation file, a log line, a chat event, a tool
// result or an artifact. A secret the person types into the chat is theirs
// to share, and is the control that shows the checks can see a leak.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/sim/fakebrowser"
)

// canaryPage is a sign-in form whose secret inputs hold pw and tok; user
// is an ordinary input's value, which may be shown.
func canaryPage(user, pw, tok string) string {
	return `<!doctype html><html><head><title>Sign in to Canary</title></head><body>
<h1>Sign in</h1>
<form action="/login" method="post">
<label>User <input name="user" value="` + user + `"></label>
<label>Password <input type="password" id="pw" name="pw" value="` + pw + `"></label>
<label>API <input name="api_token" value="` + tok + `"></label>
<button type="submit">Sign in</button>
</form>
<p>Welcome back.</p>
</body></html>`
}

// canaryCollector keeps everything the simulated extension received.
type canaryCollector struct {
	mu     sync.Mutex
	frames []string
}

func (c *canaryCollector) add(f wire.Frame) {
	b, _ := json.Marshal(f)
	c.mu.Lock()
	c.frames = append(c.frames, f.FrameType()+" "+string(b))
	c.mu.Unlock()
}

func (c *canaryCollector) all() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.frames, "\n")
}

// await waits until a frame holding s has arrived, or the guard passes.
// The panel's frames come on their own connection, after the workspace
// has published the events they carry.
func (c *canaryCollector) await(s string) bool {
	deadline := time.Now().Add(faultGuard)
	for !strings.Contains(c.all(), s) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// TestCanarySecretsReachNoOutput drives the agent (an OpenAI-compatible
// provider scripted to read the page whole and field by field, take a
// screenshot, and run env and printenv) over a page holding secrets, with
// a provider key and the bridge token in infer's environment. None of the
// secrets may appear anywhere infer writes or sends; the one the person
// types must.
func TestCanarySecretsReachNoOutput(t *testing.T) {
	needSandbox(t)
	pw := "canary-pw-" + randomHex(t)
	tok := "canary-tok-" + randomHex(t)
	key := "sk-canary-" + randomHex(t)
	typed := "canary-typed-" + randomHex(t)
	visible := "canary-visible-" + randomHex(t) // not secret: must reach env's output

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, canaryPage("alice", pw, tok))
	}))
	defer site.Close()

	m := startFaultModel(t, func(w http.ResponseWriter, r *http.Request, req faultChatRequest) {
		s := newFaultSSE(w)
		if strings.Contains(req.lastUser(), typed) {
			s.text("Noted your code " + typed + ".")
			s.finish("stop")
			return
		}
		// All tool results so far (screenshots add a user message of
		// images after theirs, so "since the last user message" would
		// start over).
		tools := 0
		for _, msg := range req.Messages {
			if msg.Role == "tool" {
				tools++
			}
		}
		switch tools {
		case 0:
			s.toolCall(0, "call_nav", "BrowserNavigate", `{"url":"`+site.URL+`/login"}`)
		case 1:
			s.toolCall(0, "call_read", "BrowserRead", `{}`)
			s.toolCall(1, "call_pw", "BrowserRead", `{"selector":"#pw"}`)
			s.toolCall(2, "call_tok", "BrowserRead", `{"selector":"input[name=api_token]"}`)
			s.toolCall(3, "call_shot", "BrowserScreenshot", `{}`)
		case 5:
			s.toolCall(0, "call_env", "Bash", `{"command":"env"}`)
			s.toolCall(1, "call_printenv", "Bash", `{"command":"printenv OPENAI_API_KEY INFER_TOKEN CANARY_VISIBLE"}`)
		default:
			s.text("All done.")
			s.finish("stop")
			return
		}
		s.finish("tool_calls")
	})

	home, project := t.TempDir(), t.TempDir()
	if err := config.EnsureDir(home); err != nil {
		t.Fatal(err)
	}
	bu := config.NewBrowserUse(config.DefaultPort)
	if err := config.CreateBrowserUse(config.BrowserUsePath(home), bu); err != nil {
		t.Fatal(err)
	}
	bridgeToken := bu.Extension.Token
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("OPENAI_BASE_URL", m.srv.URL+"/v1") // discovery stays local
	t.Setenv("INFER_TOKEN", bridgeToken)
	t.Setenv("CANARY_VISIBLE", visible)

	fb, err := fakebrowser.New(fakebrowser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	var panel canaryCollector
	rg := startFaultRig(t, home, project, faultRigOptions{
		// CANARY_VISIBLE reaches confined commands only because it is
		// listed; listing a provider's key does not let it through.
		Config:  m.providerConfig("    api_key_env: OPENAI_API_KEY\n") + "agent:\n  mode: auto\nsandbox:\n  env: [CANARY_VISIBLE, OPENAI_API_KEY, INFER_TOKEN]\n",
		Browser: fb, OnFrame: panel.add,
	})
	watch := rg.watch(t)
	var events []string
	collect := func(r faultRun) {
		events = append(events, r.raw...)
	}

	rg.client.SendUserMessage(rg.ctx(), "Sign in to the canary site and check the environment.")
	run := watch.run()
	collect(run)
	if !run.finished() {
		t.Fatalf("the scripted turn: %v %s", run.terminal.Type(), run.errorMessage())
	}
	results := rg.toolMessages()
	joined := strings.Join(results, "\n---\n")
	// The test saw what it meant to: the page, the redacted fields, the
	// screenshot and the environment.
	for _, want := range []string{"Sign in", "[redacted]", ".png", "PATH=", "CANARY_VISIBLE=" + visible} {
		if !strings.Contains(joined, want) {
			t.Fatalf("the tool results lack %q, so the canaries were not exercised:\n%s", want, joined)
		}
	}

	// The control: the person types a secret of their own.
	rg.client.SendUserMessage(rg.ctx(), "My one-time code is "+typed)
	collect(watch.run())
	panel.await(typed) // checked below with the other places
	rg.shutdown()      // every write finished

	secrets := map[string]string{"password input": pw, "api_token input": tok, "OPENAI_API_KEY": key, "bridge token": bridgeToken}
	places := map[string]string{
		"a model request body": strings.Join(m.recorded(), "\n"),
		"a log line":           rg.log.String(),
		"a frame to the panel": panel.all(),
		"a chat event":         strings.Join(events, "\n"),
		"a tool result":        joined,
	}
	m.mu.Lock()
	for _, h := range m.headers {
		h = h.Clone()
		h.Del("Authorization") // where the provider key belongs
		var b strings.Builder
		h.Write(&b)
		places["a model request header"] += b.String()
	}
	m.mu.Unlock()
	files := map[string][]byte{}
	for _, dir := range []string{home, project} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || p == config.BrowserUsePath(home) {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil {
				files[p] = b
			}
			return nil
		})
	}
	for what, secret := range secrets {
		for where, text := range places {
			if strings.Contains(text, secret) {
				t.Errorf("the %s reached %s", what, where)
			}
		}
		for p, b := range files {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("the %s reached %s", what, p)
			}
		}
	}

	// The control shows up where a leak would have.
	for _, where := range []string{"a model request body", "a frame to the panel", "a chat event"} {
		if !strings.Contains(places[where], typed) {
			t.Errorf("the typed code is missing from %s: the check cannot see leaks there", where)
		}
	}
	inConversation := false
	for p, b := range files {
		if strings.Contains(p, string(filepath.Separator)+"conversations"+string(filepath.Separator)) && bytes.Contains(b, []byte(typed)) {
			inConversation = true
		}
	}
	if !inConversation {
		t.Error("the typed code is missing from the conversation files: the check cannot see leaks there")
	}
	m.mu.Lock()
	sawKey := false
	for _, h := range m.headers {
		sawKey = sawKey || h.Get("Authorization") == "Bearer "+key
	}
	m.mu.Unlock()
	if !sawKey {
		t.Error("the provider never received its key: the provider was not the one configured")
	}

	// The screenshot: masked inputs draw the same whatever their value,
	// while an ordinary input's value shows. One address for every
	// variant, since the address may be drawn too.
	var pageMu sync.Mutex
	var current string
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		pageMu.Lock()
		defer pageMu.Unlock()
		fmt.Fprint(w, current)
	}))
	defer page.Close()
	shot := func(user, pw string) image.Image {
		pageMu.Lock()
		current = canaryPage(user, pw, tok)
		pageMu.Unlock()
		b, err := fakebrowser.New(fakebrowser.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		ctx := context.Background()
		if r := b.Do(ctx, wire.BrowserCommand{Action: browser.Navigate, URL: page.URL + "/login"}); r.Error != "" {
			t.Fatal(r.Error)
		}
		r := b.Do(ctx, wire.BrowserCommand{Action: browser.Screenshot})
		img, err := png.Decode(canaryPNGReader(t, r.Image))
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	other := "canary-pw-" + strings.Repeat("x", len(pw)-len("canary-pw-"))
	if !canarySameImage(shot("alice", pw), shot("alice", other)) {
		t.Error("the screenshot changes with the password's value: it is drawn")
	}
	if canarySameImage(shot("alice", pw), shot("bobby", pw)) {
		t.Error("the screenshot does not change with a visible input's value: the comparison proves nothing")
	}
}

func canaryPNGReader(t *testing.T, s string) *bytes.Reader {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("screenshot is not base64: %v", err)
	}
	return bytes.NewReader(b)
}

func canarySameImage(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				return false
			}
		}
	}
	return true
}
