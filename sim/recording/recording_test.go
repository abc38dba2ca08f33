package recording

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/internal/infertest"
	"github.com/infer-workspace/infer/sim"
	"github.com/infer-workspace/infer/sim/fakebrowser"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leaks.Options()...)
}

func ctxGuard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// recordSession runs one panel session against in while w records it: auto
// mode, a turn that browses the demo site, then the skill list.
func recordSession(t *testing.T, in *infertest.Infer, w *Writer) {
	t.Helper()
	fb, err := fakebrowser.New(fakebrowser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	c := sim.NewClient(sim.ClientOptions{URL: in.URL, Token: in.Token, Browser: fb, Tap: w})
	sub := c.Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithCancel(ctxGuard(t))
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.WaitFor[wire.Mode](ctx, sub, nil); err != nil {
		t.Fatal(err)
	}
	if m, err := c.SetMode(ctx, "auto"); err != nil || m.Mode != "auto" {
		t.Fatalf("set_mode: %+v %v", m, err)
	}
	if err := c.SendUserMessage(ctx, "open demo.infer.localhost; read h1"); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.WaitFor(ctx, sub, func(f wire.ChatEvent) bool { return strings.Contains(string(f.Event), `"RUN_FINISHED"`) }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListSkills(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRecordWritesEveryFrameWithoutTheToken(t *testing.T) {
	t.Parallel()
	in := infertest.Start(t, infertest.Options{})
	var buf bytes.Buffer
	w := NewWriter(&buf)
	recordSession(t, in, w)
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), in.Token) {
		t.Fatalf("the token is in the recording:\n%s", buf.String())
	}
	entries, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	var last float64
	for _, e := range entries {
		if e.T < last {
			t.Errorf("line %d goes back in time: %v after %v", e.Line, e.T, last)
		}
		last = e.T
		switch {
		case e.Handshake != nil:
			counts["handshake"]++
			if e.Handshake["Origin"] != "chrome-extension://infer-sim" || !strings.HasPrefix(e.Handshake["Host"], "127.0.0.1:") {
				t.Errorf("handshake %v", e.Handshake)
			}
		case e.Event != "":
			counts["event "+e.Event]++
		default:
			counts[string(e.Dir)+" "+e.Type()]++
		}
		if e.Type() == (wire.BrowserHello{}).FrameType() {
			var h wire.BrowserHello
			json.Unmarshal(e.Frame, &h)
			if h.Token != sim.RedactedToken || h.ExtensionVersion != "infer-sim" {
				t.Errorf("recorded hello %+v", h)
			}
		}
	}
	for _, want := range []string{
		"handshake", "event connected", "ext->srv browser_hello", "srv->ext browser_hello_ack", "srv->ext mode",
		"ext->srv set_mode", "ext->srv user_message", "srv->ext browser_command", "ext->srv browser_result",
		"srv->ext chat_event", "ext->srv list_skills", "srv->ext skills",
	} {
		if counts[want] == 0 {
			t.Errorf("no %q line in the recording; have %v", want, counts)
		}
	}
	if counts["srv->ext browser_command"] != 2 || counts["ext->srv browser_result"] != 2 {
		t.Errorf("commands and results: %v", counts)
	}
}

func recordToFile(t *testing.T) []Entry {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.jsonl")
	w, f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	recordSession(t, infertest.Start(t, infertest.Options{}), w)
	f.Close()
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("recording file: %v %v", st, err)
	}
	entries, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestReplayOfAnEquivalentRunFindsNoDifference(t *testing.T) {
	t.Parallel()
	entries := recordToFile(t)
	fresh := infertest.Start(t, infertest.Options{})
	rep, err := Replay(ctxGuard(t), entries, ReplayOptions{URL: fresh.URL, Token: fresh.Token})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equivalent() {
		t.Fatalf("replay against an identical infer differs:\n%s", rep)
	}
	if rep.Sent[(wire.UserMessage{}).FrameType()] != 1 || rep.Sent[(wire.SetMode{}).FrameType()] != 1 || rep.Sent[(wire.BrowserResult{}).FrameType()] != 0 {
		t.Errorf("sent %v", rep.Sent)
	}
	// The frame counts may differ by merged deltas (infer coalesces a
	// message's deltas when the panel reads slower than the model
	// streams); the comparison above merges them, so it is the check.
	if !strings.Contains(rep.String(), "match the recording") {
		t.Errorf("report:\n%s", rep)
	}
}

func TestExtOnlyReplayOfARecordingKeepsTheConnection(t *testing.T) {
	t.Parallel()
	entries := recordToFile(t)
	if last := entries[len(entries)-1]; last.Event != "disconnected" {
		t.Fatalf("the recording should end with its disconnection, ends with %+v", last)
	}
	fresh := infertest.Start(t, infertest.Options{})
	rep, err := Replay(ctxGuard(t), entries, ReplayOptions{URL: fresh.URL, Token: fresh.Token, ExtOnly: true, Settle: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Equivalent() || rep.Sent[(wire.BrowserResult{}).FrameType()] != 2 {
		t.Fatalf("report:\n%s\nsent %v", rep, rep.Sent)
	}
}

func TestReplayReportsAChangedAnswer(t *testing.T) {
	t.Parallel()
	entries := recordToFile(t)
	// Pretend the recorded infer said something else, and sent one frame
	// more, than the infer replayed against will.
	// Deltas may arrive merged (a busy panel mirror coalesces them), so
	// look for the word anywhere in a delta.
	changed := false
	for i, e := range entries {
		if e.Dir == sim.SrvToExt && strings.Contains(string(e.Frame), `"delta":"`) && strings.Contains(string(e.Frame), "Welcome") && !changed {
			entries[i].Frame = []byte(strings.Replace(string(e.Frame), "Welcome", "Farewell", 1))
			changed = true
		}
	}
	if !changed {
		t.Fatal("the recording has no delta with Welcome")
	}
	entries = append(entries, Entry{T: 99, Dir: sim.SrvToExt, Frame: []byte(`{"type":"interrupted"}`), Line: 999})
	fresh := infertest.Start(t, infertest.Options{})
	rep, err := Replay(ctxGuard(t), entries, ReplayOptions{URL: fresh.URL, Token: fresh.Token, Settle: 200 * time.Millisecond, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Equivalent() || len(rep.Differences) != 2 {
		t.Fatalf("want 2 differences:\n%s", rep)
	}
	report := rep.String()
	for _, want := range []string{"~ changed (line", "event.delta is ", "Welcome", `recorded "`, "Farewell", "- missing (line 999)", `{"type":"interrupted"}`} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
}

// realExtension is the opentask 1.12.1 session kept in testdata; see
// testdata/README.md for what it holds and which side of it to trust.
const realExtension = "testdata/opentask-1.12.1.jsonl"

// loadRealExtension fails, never skips, when the recording is missing: it
// is part of the repository, so a checkout without it is broken.
func loadRealExtension(t *testing.T) []Entry {
	t.Helper()
	entries, err := Load(realExtension)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestInferAcceptsEveryFrameOfTheRealExtension(t *testing.T) {
	t.Parallel()
	entries := loadRealExtension(t)
	in := infertest.Start(t, infertest.Options{})
	rep, err := Replay(ctxGuard(t), entries, ReplayOptions{URL: in.URL, Token: in.Token, ExtOnly: true, Settle: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dropped != "" {
		t.Fatalf("infer dropped the real extension:\n%s", rep)
	}
	if rep.Sent[(wire.BrowserResult{}).FrameType()] != 27 || rep.Sent[(wire.ListConversations{}).FrameType()] != 1 ||
		rep.Sent[wire.ListSkills{}.FrameType()] != 1 || rep.Sent[wire.UserMessage{}.FrameType()] != 1 {
		t.Errorf("sent %v", rep.Sent)
	}
	if !strings.Contains(rep.String(), "infer accepted every recorded extension frame") {
		t.Errorf("report:\n%s", rep)
	}
}

func TestReplayOfTheRealExtensionIsInformational(t *testing.T) {
	t.Parallel()
	entries := loadRealExtension(t)
	in := infertest.Start(t, infertest.Options{})
	rep, err := Replay(ctxGuard(t), entries, ReplayOptions{URL: in.URL, Token: in.Token, Settle: 200 * time.Millisecond, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The recorded server was a test double, so infer answers differently;
	// the frames both sent still line up.
	if rep.Equivalent() || rep.Dropped != "" {
		t.Fatalf("report:\n%s", rep)
	}
	report := rep.String()
	for _, want := range []string{"differences from the recorded frames", "browser_command"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	for _, d := range rep.Differences {
		if strings.Contains(d.Want, `"browser_hello_ack"`) {
			t.Errorf("the hello ack was reported as different: %+v", d)
		}
	}
}

func TestNormalizeMasksIdsTimesAndUUIDs(t *testing.T) {
	t.Parallel()
	a := Normalize([]byte(`{"type":"chat_event","event":{"type":"RUN_STARTED","timestamp":1,"threadId":"x","runId":"y"}}`))
	b := Normalize([]byte(`{"type":"chat_event","event":{"runId":"q","threadId":"z","type":"RUN_STARTED","timestamp":2}}`))
	if a != b {
		t.Errorf("%s != %s", a, b)
	}
	c := Normalize([]byte(`{"type":"conversations","conversations":[{"id":"1","title":"resumed 11111111-1111-1111-1111-111111111111 at 2026-08-16T12:00:00Z","updated_at":"2026-08-16T12:00:00Z"}]}`))
	if !strings.Contains(c, `resumed <uuid> at <time>`) || strings.Contains(c, "2026") {
		t.Errorf("normalized %s", c)
	}
}

func TestReadRejectsWhatIsNotARecording(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"{\"t\":1,\"dir\":\"ext->srv\",\"frame\":{\"type\":\"x\"}}\nnot json\n", "line 2"},
		{"{\"t\":1,\"dir\":\"sideways\",\"frame\":{}}\n", "unknown direction"},
		{"{\"t\":1,\"dir\":\"ext->srv\"}\n", "without a frame"},
	} {
		_, err := Read(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TestDeltaCuttingDoesNotCountAsADifference: infer may merge a message's
// deltas differently from run to run; the text is what is compared.
func TestDeltaCuttingDoesNotCountAsADifference(t *testing.T) {
	t.Parallel()
	frame := func(delta string) []byte {
		return []byte(`{"type":"chat_event","event":{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"` + delta + `"}}`)
	}
	recorded := []Entry{
		{Dir: sim.SrvToExt, Frame: frame("Hello "), Line: 3},
		{Dir: sim.SrvToExt, Frame: frame("big "), Line: 4},
		{Dir: sim.SrvToExt, Frame: frame("world"), Line: 5},
	}
	if d := compare(recorded, [][]byte{frame("Hello big "), frame("world")}); len(d) != 0 {
		t.Fatalf("differences for the same text cut differently: %+v", d)
	}
	if d := compare(recorded, [][]byte{frame("Hello small world")}); len(d) == 0 {
		t.Fatal("a different text was not reported")
	}
}
