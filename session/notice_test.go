package session

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infer-workspace/infer/internal/syncbuf"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// logLine returns the first line of log that contains every part.
func logLine(log *syncbuf.Buffer, parts ...string) string {
	for line := range strings.Lines(log.String()) {
		found := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				found = false
				break
			}
		}
		if found {
			return line
		}
	}
	return ""
}

func withLog(sink *syncbuf.Buffer) func(*Options) {
	return func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
}

// shownNotice is a notice shown outside any run, as a test reads it.
type shownNotice struct {
	Conversation string
	Text         string
	Level        Level
	Origin       Origin
}

// asNotice reads e as a notice shown outside any run: a Notice item done.
func asNotice(e Event) (shownNotice, bool) {
	c, ok := change(e)
	if !ok || c.Op != transcript.ItemDone || c.Item.Kind != transcript.Notice || c.Run != "" {
		return shownNotice{}, false
	}
	return shownNotice{Conversation: c.Conversation, Text: c.Item.Text, Level: c.Item.Level, Origin: c.Item.Origin}, true
}

func isNotice(e Event) bool { _, ok := asNotice(e); return ok }

// lastNotice is the notice the last of evs shows.
func lastNotice(evs []Event) shownNotice {
	n, _ := asNotice(evs[len(evs)-1])
	return n
}

// TestPanelModeChangesAreAnnouncedRecordedAndLogged: the panel raising the
// mode to auto is a warning notice in every front end, a notice recorded
// in the (so far unused) conversation and a WARN log line; lowering it is
// an ordinary notice; the terminal's own changes are logged only. The
// recorded notices come back on resume and never reach the model.
func TestPanelModeChangesAreAnnouncedRecordedAndLogged(t *testing.T) {
	sink := &syncbuf.Buffer{}
	rp := &recordingProvider{}
	dir := t.TempDir()
	f := newFixture(t, dir, withLog(sink), func(o *Options) { o.Catalog = oneCatalog{rp} })
	sub := f.w.Subscribe()
	defer sub.Close()

	if m, ok := f.w.SetMode("auto", tools.OriginPanel); !ok || m != tools.Auto {
		t.Fatalf("set_mode auto: %v %v", m, ok)
	}
	evs := collect(t, sub, isNotice)
	raised := lastNotice(evs)
	if !strings.HasPrefix(raised.Text, "The browser panel switched the mode from standard to auto") || raised.Level != Warn ||
		!strings.Contains(raised.Text, "without asking") || raised.Origin != tools.OriginPanel {
		t.Fatalf("notice %+v", raised)
	}
	id := f.w.ActiveConversation()
	if id == "" || raised.Conversation != id {
		t.Fatalf("the notice's conversation %q, active %q", raised.Conversation, id)
	}
	c, err := f.st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Notices) != 1 || c.Notices[0].Text != raised.Text || c.Notices[0].Origin != "panel" || !c.Notices[0].Warn || len(c.Messages) != 0 {
		t.Fatalf("stored %+v", c)
	}
	if line := logLine(sink, "level=WARN", "from=standard", "to=auto", "origin=panel"); line == "" {
		t.Fatalf("no WARN line for the raise in:\n%s", sink)
	}

	// Setting the mode it already has changes nothing and says nothing.
	f.w.SetMode("auto", tools.OriginPanel)
	f.w.SetMode("standard", tools.OriginPanel)
	evs = collect(t, sub, isNotice)
	lowered := lastNotice(evs)
	if lowered.Text != "The browser panel switched the mode from auto to standard." || lowered.Level != Info {
		t.Fatalf("notice %+v", lowered)
	}
	for _, e := range evs[:len(evs)-1] {
		if isNotice(e) {
			t.Fatalf("a notice for a mode that did not change: %+v", e)
		}
	}

	// The terminal's changes are the person's own: logged, not announced.
	f.w.SetMode("plan", tools.OriginTerminal)
	f.w.SetMode("auto", tools.OriginTerminal)
	if line := logLine(sink, "level=INFO", "from=plan", "to=auto", "origin=terminal"); line == "" {
		t.Fatalf("no INFO line for the terminal's change in:\n%s", sink)
	}

	// A message afterwards lands in the same conversation; the model reads
	// the message, not the notices.
	if err := f.w.Send("hello", tools.OriginTerminal); err != nil {
		t.Fatal(err)
	}
	evs = collect(t, sub, idle)
	for _, e := range evs {
		if isNotice(e) {
			t.Fatalf("a notice for the terminal's change: %+v", e)
		}
	}
	if f.w.ActiveConversation() != id {
		t.Fatal("the message started another conversation")
	}
	rp.mu.Lock()
	reqs := append([]llm.Request(nil), rp.reqs...)
	rp.mu.Unlock()
	if len(reqs) != 1 || len(reqs[0].Messages) != 1 || reqs[0].Messages[0].Content != "hello" {
		t.Fatalf("the model read %+v", reqs)
	}

	// Resumed after a restart, the notices are in place.
	f.w.Close()
	g := newFixture(t, dir, func(o *Options) { o.Catalog = oneCatalog{rp} })
	snap, err := g.w.Resume(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(noticesOf(snap)) != 2 || noticesOf(snap)[0].Text != raised.Text || noticesOf(snap)[1].Text != lowered.Text ||
		noticesOf(snap)[1].After != 0 || len(messagesOf(snap)) != 2 || snap.Title != "hello" {
		t.Fatalf("resumed %+v", snap)
	}
}

// TestPanelToolRequestIsAnnouncedRecordedAndLogged: a tool_request is a
// notice (a warning in auto mode) naming the tool and its shortened
// arguments, recorded in the conversation and logged with its outcome;
// a secret in the arguments is in none of them.
func TestPanelToolRequestIsAnnouncedRecordedAndLogged(t *testing.T) {
	sink := &syncbuf.Buffer{}
	f := newFixture(t, "", withLog(sink))
	f.w.SetMode("auto", tools.OriginTerminal)
	sub := f.w.Subscribe()
	defer sub.Close()

	const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	cmd := "touch X && id # token " + secret + " \x1b[2J" + strings.Repeat(" padding", 100)
	args := `{"command":` + mustQuote(t, cmd) + `}`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := f.w.RunTool(ctx, "req-1", "Bash", args, tools.OriginPanel)
	if !o.Success {
		t.Fatalf("outcome %+v", o)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "X")); err != nil {
		t.Fatal("the command did not run")
	}
	evs := collect(t, sub, isNotice)
	n := lastNotice(evs)
	if !strings.HasPrefix(n.Text, `The browser panel asked to run Bash in auto mode: {"command":"touch X && id`) || n.Level != Warn ||
		!strings.HasSuffix(n.Text, "…") || n.Origin != tools.OriginPanel {
		t.Fatalf("notice %q", n.Text)
	}
	for what, s := range map[string]string{"notice": n.Text, "log": sink.String()} {
		if strings.Contains(s, secret) || strings.Contains(s, "\x1b") {
			t.Errorf("the %s quotes the secret or the escape:\n%s", what, s)
		}
	}
	if utf8Len := len([]rune(n.Text)); utf8Len > 300 {
		t.Errorf("notice of %d runes", utf8Len)
	}
	c, err := f.st.Load(f.w.ActiveConversation())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Notices) != 1 || c.Notices[0].Text != n.Text || len(c.Messages) != 0 {
		t.Fatalf("stored %+v", c)
	}
	if logLine(sink, "level=INFO", "origin=panel", "id=req-1", "tool=Bash", "touch X && id", "[redacted]") == "" {
		t.Errorf("no request line in the log:\n%s", sink)
	}
	if logLine(sink, "level=INFO", "requested tool call ended", "id=req-1", "ok=true") == "" {
		t.Errorf("no outcome line in the log:\n%s", sink)
	}

	// In standard mode the request is an ordinary notice (it asks first).
	f.w.SetMode("standard", tools.OriginTerminal)
	f.w.RunTool(ctx, "req-2", "Read", `{"path":"X"}`, tools.OriginPanel)
	evs = collect(t, sub, isNotice)
	if got := lastNotice(evs); got.Text != `The browser panel asked to run Read: {"path":"X"}` || got.Level != Info {
		t.Fatalf("notice %+v", got)
	}
}

func mustQuote(t *testing.T, s string) string {
	t.Helper()
	q, err := jsonString(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestNoticeAndFirstMessageShareOneConversation: a panel notice and the
// first message of a fresh conversation, at once, create one store entry,
// not two.
func TestNoticeAndFirstMessageShareOneConversation(t *testing.T) {
	for range 20 {
		f := newFixture(t, "")
		sub := f.w.Subscribe()
		var wg sync.WaitGroup
		wg.Go(func() { f.w.SetMode("auto", tools.OriginPanel) })
		if err := f.w.Send("hello", tools.OriginTerminal); err != nil {
			t.Fatal(err)
		}
		collect(t, sub, idle)
		wg.Wait()
		sub.Close()
		list, err := f.w.Conversations()
		if err != nil || len(list) != 1 {
			t.Fatalf("conversations %+v %v", list, err)
		}
		c, err := f.st.Load(list[0].ID)
		if err != nil || len(c.Notices) != 1 || len(c.Messages) != 2 {
			t.Fatalf("stored %+v %v", c, err)
		}
		f.w.Close()
	}
}
