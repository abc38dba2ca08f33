package tui

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// Golden files hold the whole screen as plain text: View().Content with
// every ANSI sequence stripped. Colour is not what these tests check (the
// NO_COLOR test checks that none is emitted); layout, wording, symbols and
// truncation are. Refresh with: go test ./tui/... -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var goldenSizes = [][2]int{{160, 48}, {100, 30}, {60, 20}}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run go test ./tui/... -update to create it): %v", path, err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the screen; run go test ./tui/... -update if the change is intended.\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// scenarios build the screens the goldens cover; each returns a harness
// at the given size.
var scenarios = []struct {
	name  string
	build func(t *testing.T, w, h int) *harness
}{
	{"empty_waiting", func(t *testing.T, w, h int) *harness {
		return newHarness(t, newFakeWS(), w, h)
	}},
	{"conversation", buildConversation},
	{"approval", buildApproval},
	{"browser_connected", buildBrowser},
	{"resume_picker", buildResume},
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios {
		for _, size := range goldenSizes {
			name := fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				h := sc.build(t, size[0], size[1])
				screen := h.screen()
				lines := strings.Split(screen, "\n")
				if len(lines) != size[1] {
					t.Errorf("screen has %d lines, want %d", len(lines), size[1])
				}
				checkGolden(t, name, screen)
			})
		}
	}
}

func conversationSnapshot() session.Snapshot {
	done := func(it transcript.Item) transcript.Item { it.Done = true; return it }
	call := func(id, name, args, result string, ok bool) transcript.Item {
		return done(transcript.Item{ID: id, Kind: transcript.Tool, Call: transcript.Call{Name: name, Args: args, Result: result, OK: ok}})
	}
	return session.Snapshot{
		ID:    "c1",
		Title: "Check the example site",
		Transcript: transcript.Transcript{Items: []transcript.Item{
			done(transcript.Item{Kind: transcript.User, Text: "think about example.com; open example.com"}),
			done(transcript.Item{ID: "r1", Kind: transcript.Reasoning, Text: "Thinking about: example.com and what the person wants from it"}),
			done(transcript.Item{ID: "t1", Kind: transcript.Text, Text: "Calling BrowserNavigate."}),
			call("call_1", "BrowserNavigate", `{"url":"https://example.com"}`, "Navigated to Example Domain (https://example.com/).", true),
			done(transcript.Item{ID: "t2", Kind: transcript.Text, Text: "## Done\n\nThe page is open. It says:\n\n- **Example Domain**\n- a link to *More information*\n\n```go\nfmt.Println(\"hello\")\n```"}),
			done(transcript.Item{Kind: transcript.User, Text: "run ls /nope"}),
			done(transcript.Item{ID: "t3", Kind: transcript.Text, Text: "Calling Bash."}),
			call("call_2", "Bash", `{"command":"ls /nope"}`, "ls: cannot access '/nope': No such file or directory\nexit status 2", false),
		}},
	}
}

func buildConversation(t *testing.T, w, h int) *harness {
	ws := newFakeWS()
	ws.snap = conversationSnapshot()
	hs := newHarness(t, ws, w, h)
	hs.events(
		userSaid("", "and read the heading", tools.OriginPanel),
		session.BusyChanged{Busy: true},
		runStarted("r1"),
		segmentStarted("m1", transcript.Text),
		delta("m1", "Calling BrowserRead."),
		segmentDone("m1", transcript.Text, "Calling BrowserRead."),
		callStarted("call_3", "BrowserRead", `{"selector":"h1"}`),
		session.QueueChanged{Queue: []string{"then take a screenshot"}},
	)
	return hs
}

// The transcript changes the fake workspace publishes, as the agent makes
// them.
func change(c transcript.Change) session.Event { return session.TranscriptChanged{Change: c} }

func runStarted(run string) session.Event {
	return change(transcript.Change{Op: transcript.RunStarted, Run: run})
}

func userSaid(conv, text string, origin tools.Origin) session.Event {
	return change(transcript.Change{Op: transcript.ItemDone, Conversation: conv, Item: transcript.Item{Kind: transcript.User, Text: text, Origin: origin}})
}

func segmentStarted(id string, k transcript.Kind) session.Event {
	return change(transcript.Change{Op: transcript.ItemStarted, Item: transcript.Item{ID: id, Kind: k}})
}

func delta(id, d string) session.Event {
	return change(transcript.Change{Op: transcript.DeltaAppended, Item: transcript.Item{ID: id}, Delta: d})
}

func segmentDone(id string, k transcript.Kind, text string) session.Event {
	return change(transcript.Change{Op: transcript.ItemDone, Item: transcript.Item{ID: id, Kind: k, Text: text}})
}

func callStarted(id, name, args string) session.Event {
	return change(transcript.Change{Op: transcript.ItemStarted, Item: transcript.Item{ID: id, Kind: transcript.Tool, Call: transcript.Call{Name: name, Args: args}}})
}

func callDone(id, name, args, result string, ok bool, d time.Duration) session.Event {
	return change(transcript.Change{Op: transcript.ItemDone, Item: transcript.Item{ID: id, Kind: transcript.Tool,
		Call: transcript.Call{Name: name, Args: args, Result: result, OK: ok, Duration: d}}})
}

func editApproval() session.Approval {
	return session.Approval{
		ID:      "ap1",
		Call:    tools.Call{ID: "call_9", Name: "Edit", Origin: tools.OriginAgent, Args: `{"path":"main.go","old_string":"func main() {\n\tfmt.Println(\"hi\")\n}","new_string":"func main() {\n\tfmt.Println(\"hello, world\")\n\tos.Exit(0)\n}"}`},
		Why:     "Edit changes files; standard mode asks first.",
		Options: []tools.GrantOption{{Label: "Always allow Edit in this project"}},
		Opened:  epoch,
	}
}

func bashApproval() session.Approval {
	return session.Approval{
		ID:      "ap2",
		Call:    tools.Call{ID: "call_10", Name: "Bash", Origin: tools.OriginPanel, Args: `{"command":"rm -rf build/"}`},
		Why:     "rm is not on the allowlist.",
		Options: []tools.GrantOption{{Label: "Always allow Bash commands starting with `rm -rf build/`"}, {Label: "Always allow Bash commands starting with `rm`"}},
		Opened:  epoch,
	}
}

func buildApproval(t *testing.T, w, h int) *harness {
	ws := newFakeWS()
	ws.snap = conversationSnapshot()
	hs := newHarness(t, ws, w, h)
	hs.events(
		session.ApprovalOpened{Approval: editApproval()},
		session.ApprovalOpened{Approval: bashApproval()},
	)
	return hs
}

// screenshotPNG is a deterministic picture: a header bar, a heading block
// and a button on white, PNG-encoded as the extension sends it.
func screenshotPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 320, 200))
	for y := 0; y < 200; y++ {
		for x := 0; x < 320; x++ {
			c := color.RGBA{255, 255, 255, 255}
			switch {
			case y < 30:
				c = color.RGBA{40, 60, 120, 255}
			case y > 60 && y < 90 && x > 40 && x < 280:
				c = color.RGBA{30, 30, 30, 255}
			case y > 130 && y < 160 && x > 120 && x < 200:
				c = color.RGBA{200, 60, 60, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func buildBrowser(t *testing.T, w, h int) *harness {
	ws := newFakeWS()
	ws.status = browser.Status{State: browser.Connected, ExtensionVersion: "1.12.1", Since: epoch.Add(-3 * time.Minute), RTT: 12 * time.Millisecond}
	hs := newHarness(t, ws, w, h)
	page := &session.Page{URL: "https://example.com/", Title: "Example Domain"}
	hs.events(
		session.BrowserCommandDone{Record: browser.CommandRecord{Action: browser.Navigate, Target: "https://example.com", Started: epoch, Latency: 412 * time.Millisecond}},
		session.BrowserCommandDone{Record: browser.CommandRecord{Action: browser.Click, Target: "#missing", Started: epoch, Latency: 35 * time.Millisecond, Err: "no element matches #missing"}},
		userSaid("c9", "tabs; screenshot", tools.OriginTerminal),
		callStarted("call_t", "BrowserTabs", ""),
	)
	hs.events(
		session.BrowserCommandDone{Record: browser.CommandRecord{Action: browser.Tabs, Started: epoch, Latency: 8 * time.Millisecond}},
		session.PageChanged{Page: *page},
		session.TabsChanged{Tabs: []browser.Tab{
			{Index: 0, Title: "Example Domain", URL: "https://example.com/", Controlled: true, Active: true},
			{Index: 1, Title: "Docs", URL: "https://docs.example.com/guide"},
			{Index: 2, URL: "about:blank"},
		}},
		callDone("call_t", "BrowserTabs", "", "3 open tabs:\n0. Example Domain — https://example.com/ [controlled, focused]\n1. Docs — https://docs.example.com/guide\n2. (untitled) — about:blank\n", true, 8*time.Millisecond),
		callStarted("call_s", "BrowserScreenshot", ""),
	)
	hs.events(
		session.PageChanged{Page: *page},
		session.ScreenshotTaken{Screenshot: session.Screenshot{Image: screenshotPNG(t), MIME: "image/png", URL: page.URL, At: epoch}},
		callDone("call_s", "BrowserScreenshot", "", "Screenshot of Example Domain (https://example.com/) saved to artifacts/screenshots/20260902-140305.png (320×200 PNG, 1234 bytes).", true, 1230*time.Millisecond),
		session.UsageReported{Conversation: "c9", Usage: llm.Usage{InputTokens: 12_345, OutputTokens: 678}},
	)
	hs.key("tab", "tab") // focus the browser pane (approvals are skipped: none wait)
	return hs
}

func resumeMetas() []store.Meta {
	at := func(d time.Duration) time.Time { return epoch.Add(-d) }
	return []store.Meta{
		{ID: "c1", Title: "Check the example site", UpdatedAt: at(time.Minute), MessageCount: 7},
		{ID: "c2", Title: "Fix the flaky login test", UpdatedAt: at(2 * time.Hour), MessageCount: 42},
		{ID: "c3", Title: "Release notes for 0.3", UpdatedAt: at(26 * time.Hour), MessageCount: 12, Pinned: true},
		{ID: "c4", Title: "", UpdatedAt: at(72 * time.Hour), MessageCount: 1},
		{ID: "c5", Title: "Compare checkout flows on three shops, with screenshots of each step", UpdatedAt: at(96 * time.Hour), MessageCount: 88},
	}
}

func buildResume(t *testing.T, w, h int) *harness {
	ws := newFakeWS()
	ws.snap = conversationSnapshot()
	ws.metas = resumeMetas()
	hs := newHarness(t, ws, w, h)
	hs.typeText("/resume")
	hs.key("enter")
	return hs
}
