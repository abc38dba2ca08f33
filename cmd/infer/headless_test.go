package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adrg/xdg"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	aguijson "github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/encoding/json"
	"github.com/sirupsen/logrus"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/sim"
)

// hlGuard bounds every wait in these tests; it is a "did not hang" guard,
// not a speed check.
const hlGuard = 20 * time.Second

// hlBuffer is a writer the command and the workspace's goroutines write to
// while the test reads it.
type hlBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newHLBuffer() *hlBuffer { return &hlBuffer{changed: make(chan struct{}, 1)} }

func (h *hlBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	n, err := h.b.Write(p)
	h.mu.Unlock()
	select {
	case h.changed <- struct{}{}:
	default:
	}
	return n, err
}

func (h *hlBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.b.String()
}

// waitFor returns the first match of re once the buffer holds one.
func (h *hlBuffer) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	guard := time.After(hlGuard)
	for {
		if m := re.FindStringSubmatch(h.String()); m != nil {
			return m
		}
		select {
		case <-h.changed:
		case <-guard:
			t.Fatalf("no %q within %s; so far:\n%s", re, hlGuard, h.String())
		}
	}
}

// hlCall is one `infer headless` running in-process through run(), with
// os.Stdin replaced by a pipe the test writes to.
type hlCall struct {
	stdout, stderr *hlBuffer
	stdin          *os.File
	cancel         context.CancelFunc
	done           chan int
	code           int
	finished       bool
}

func startHL(t *testing.T, args ...string) *hlCall {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	at := testWhere(t)
	ctx, cancel := context.WithCancel(inDirs(context.Background(), at.home, at.wd))
	c := &hlCall{stdout: newHLBuffer(), stderr: newHLBuffer(), stdin: w, cancel: cancel, done: make(chan int, 1)}
	go func() { c.done <- run(ctx, append([]string{"headless"}, args...), r, c.stdout, c.stderr) }()
	t.Cleanup(func() {
		w.Close() // ends the approval reader, if one started
		cancel()
		c.wait(t)
		r.Close()
	})
	return c
}

func (c *hlCall) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		t.Fatalf("writing stdin: %v", err)
	}
}

func (c *hlCall) closeStdin() { c.stdin.Close() }

func (c *hlCall) wait(t *testing.T) int {
	t.Helper()
	if c.finished {
		return c.code
	}
	select {
	case c.code = <-c.done:
		c.finished = true
	case <-time.After(hlGuard):
		t.Fatalf("infer headless did not end within %s\nstdout:\n%s\nstderr:\n%s", hlGuard, c.stdout, c.stderr)
	}
	return c.code
}

// runHL runs `infer headless` to its end with stdin holding input.
func runHL(t *testing.T, input string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	c := startHL(t, args...)
	if input != "" {
		if _, err := io.WriteString(c.stdin, input); err != nil {
			t.Fatal(err)
		}
	}
	c.closeStdin()
	code = c.wait(t)
	return c.stdout.String(), c.stderr.String(), code
}

// hlProject gives the test a home (no browser_use.yaml, so no bridge) and
// a project directory, which infer run in this process by the test's
// helpers uses as its working directory (see useDirs).
func hlProject(t *testing.T) (home, project string) {
	t.Helper()
	home = freshHome(t)
	project = t.TempDir()
	useDirs(t, home, project)
	return home, project
}

// withBridge writes a browser_use.yaml that enables the bridge on port.
func withBridge(t *testing.T, home string, port int) string {
	t.Helper()
	if err := config.EnsureDir(home); err != nil {
		t.Fatal(err)
	}
	bu := config.NewBrowserUse(port)
	if err := config.CreateBrowserUse(config.BrowserUsePath(home), bu); err != nil {
		t.Fatal(err)
	}
	return bu.Extension.Token
}

// jsonLines decodes --output json, failing on any line that is not one
// JSON object.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for i, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not a JSON object: %v\n%s", i+1, err, l)
		}
		lines = append(lines, m)
	}
	return lines
}

func ofType(lines []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["type"] == typ {
			out = append(out, l)
		}
	}
	return out
}

func joinedDeltas(lines []map[string]any, typ string) string {
	var b strings.Builder
	for _, l := range ofType(lines, typ) {
		b.WriteString(l["delta"].(string))
	}
	return b.String()
}

// aguiEvents decodes --output ag-ui with the AG-UI SDK's own event
// decoder and validates every event; any line it cannot read fails.
func aguiEvents(t *testing.T, out string) []events.Event {
	t.Helper()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	dec := events.NewEventDecoder(quiet)
	var evs []events.Event
	for i, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(l), &head); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, l)
		}
		ev, err := dec.DecodeEvent(head.Type, []byte(l))
		if err != nil {
			t.Fatalf("line %d does not decode as AG-UI: %v\n%s", i+1, err, l)
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("line %d is not a valid AG-UI event: %v\n%s", i+1, err, l)
		}
		evs = append(evs, ev)
	}
	return evs
}

// checkBracketed asserts the run has exactly one RUN_STARTED, before
// every other run event, and exactly one terminal event, last.
func checkBracketed(t *testing.T, evs []events.Event) events.Event {
	t.Helper()
	starts, ends := 0, 0
	startAt := -1
	for i, e := range evs {
		switch e.Type() {
		case events.EventTypeRunStarted:
			starts++
			startAt = i
		case events.EventTypeRunFinished, events.EventTypeRunError:
			ends++
		}
	}
	if starts != 1 || ends != 1 {
		t.Fatalf("%d RUN_STARTED and %d terminal events, want 1 and 1", starts, ends)
	}
	for _, e := range evs[:startAt] {
		if e.Type() != events.EventTypeMessagesSnapshot {
			t.Fatalf("%s before RUN_STARTED", e.Type())
		}
	}
	last := evs[len(evs)-1]
	if last.Type() != events.EventTypeRunFinished && last.Type() != events.EventTypeRunError {
		t.Fatalf("the last event is %s, not the run's end", last.Type())
	}
	return last
}

func TestHeadlessTextOutput(t *testing.T) {
	t.Parallel()
	hlProject(t)

	out, errOut, code := runHL(t, "", "think about x")
	if code != 0 || !strings.Contains(out, "I thought about “about x”") || strings.Contains(out+errOut, "Thinking about") {
		t.Fatalf("think, reasoning hidden: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = runHL(t, "", "--show-reasoning", "think about x")
	if code != 0 || !strings.Contains(errOut, "thinking: Thinking about: about x") || strings.Contains(out, "Thinking") {
		t.Fatalf("think, reasoning shown: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	out, _, code = runHL(t, "", "stream", "20") // arguments are joined
	if code != 0 || strings.TrimSpace(out) != strings.TrimSpace(numbers(20)) {
		t.Fatalf("stream: exit %d\n%q", code, out)
	}

	// Without a browser the tool fails, but the run itself finishes.
	out, errOut, code = runHL(t, "", "tabs")
	if code != 0 {
		t.Fatalf("tabs: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"Calling BrowserTabs.\n→ BrowserTabs\n", "✗ BrowserTabs (", "): Browser use is off in this infer", "Done.\n- BrowserTabs: Browser use is off"} {
		if !strings.Contains(out, want) {
			t.Errorf("tabs output lacks %q:\n%s", want, out)
		}
	}

	out, errOut, code = runHL(t, "", "fail")
	if code != 1 {
		t.Fatalf("fail: exit %d", code)
	}
	if !strings.Contains(out, "This reply will fail halfway") || strings.Contains(out, "⚠") || strings.Contains(out, "simulated") {
		t.Errorf("fail: stdout should hold the partial answer only:\n%s", out)
	}
	if !strings.Contains(errOut, "infer: the run failed: ") || !strings.Contains(errOut, "simulated provider failure") || !strings.Contains(errOut, "(stream_error)") {
		t.Errorf("fail: stderr:\n%s", errOut)
	}
}

func numbers(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d ", i)
	}
	return b.String()
}

func TestHeadlessJSONOutput(t *testing.T) {
	t.Parallel()
	hlProject(t)

	out, errOut, code := runHL(t, "", "--output", "json", "stream 20")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := jsonLines(t, out)
	first, last := lines[0], lines[len(lines)-1]
	if first["type"] != "run_started" || first["schema"] != float64(1) || first["model"] != "offline/demo" || first["mode"] != "standard" || first["resumed"] != false || first["conversation_id"] == "" {
		t.Fatalf("first line %v", first)
	}
	if last["type"] != "run_finished" || last["conversation_id"] != first["conversation_id"] || last["run_id"] != first["run_id"] {
		t.Fatalf("last line %v", last)
	}
	if u := lines[len(lines)-2]; u["type"] != "usage" || u["output_tokens"] != float64(20) {
		t.Fatalf("usage line %v", u)
	}
	if got := joinedDeltas(lines, "text"); got != numbers(20) {
		t.Fatalf("text %q", got)
	}
	if len(ofType(lines, "text")) < 2 {
		t.Fatal("the text arrived in one piece, not as deltas")
	}

	out, _, code = runHL(t, "", "--format", "json", "think about x") // the alias
	lines = jsonLines(t, out)
	if code != 0 || joinedDeltas(lines, "reasoning") != "Thinking about: about x" || !strings.HasPrefix(joinedDeltas(lines, "text"), "I thought about") {
		t.Fatalf("think: exit %d\n%s", code, out)
	}

	out, _, code = runHL(t, "", "-o", "json", "tabs")
	lines = jsonLines(t, out)
	calls, results := ofType(lines, "tool_call"), ofType(lines, "tool_result")
	if code != 0 || len(calls) != 1 || len(results) != 1 {
		t.Fatalf("tabs: exit %d\n%s", code, out)
	}
	if c := calls[0]; c["name"] != "BrowserTabs" || c["arguments"] != "{}" || c["id"] == "" {
		t.Errorf("tool_call %v", c)
	}
	if r := results[0]; r["id"] != calls[0]["id"] || r["name"] != "BrowserTabs" || r["ok"] != false || !strings.HasPrefix(r["output"].(string), "Browser use is off in this infer") {
		t.Errorf("tool_result %v", r)
	}
	if lines[len(lines)-1]["type"] != "run_finished" {
		t.Errorf("tabs ends with %v", lines[len(lines)-1])
	}

	out, _, code = runHL(t, "", "-o", "json", "fail")
	lines = jsonLines(t, out)
	end := lines[len(lines)-1]
	if code != 1 || end["type"] != "run_error" || end["code"] != "stream_error" || !strings.Contains(end["message"].(string), "simulated provider failure") {
		t.Fatalf("fail: exit %d, last %v", code, end)
	}
	if strings.Contains(joinedDeltas(lines, "text"), "⚠") {
		t.Error("the closing notice leaked into the text lines")
	}
}

func TestHeadlessAGUIOutput(t *testing.T) {
	t.Parallel()
	hlProject(t)
	cases := []struct {
		prompt   string
		code     int
		terminal events.EventType
		needs    []events.EventType
	}{
		{"think about x", 0, events.EventTypeRunFinished, []events.EventType{events.EventTypeReasoningStart, events.EventTypeReasoningMessageContent, events.EventTypeReasoningEnd, events.EventTypeTextMessageContent}},
		{"stream 20", 0, events.EventTypeRunFinished, []events.EventType{events.EventTypeTextMessageStart, events.EventTypeTextMessageContent, events.EventTypeTextMessageEnd}},
		{"tabs", 0, events.EventTypeRunFinished, []events.EventType{events.EventTypeToolCallStart, events.EventTypeToolCallArgs, events.EventTypeToolCallEnd, events.EventTypeToolCallResult}},
		{"fail", 1, events.EventTypeRunError, []events.EventType{events.EventTypeTextMessageContent}},
	}
	for _, tc := range cases {
		out, errOut, code := runHL(t, "", "--output", "ag-ui", tc.prompt)
		if code != tc.code {
			t.Fatalf("%s: exit %d, want %d\n%s", tc.prompt, code, tc.code, errOut)
		}
		evs := aguiEvents(t, out)
		if last := checkBracketed(t, evs); last.Type() != tc.terminal {
			t.Fatalf("%s: ends with %s", tc.prompt, last.Type())
		}
		seen := map[events.EventType]int{}
		for _, e := range evs {
			seen[e.Type()]++
		}
		for _, need := range tc.needs {
			if seen[need] == 0 {
				t.Errorf("%s: no %s event in\n%s", tc.prompt, need, out)
			}
		}
		if tc.prompt == "stream 20" {
			if seen[events.EventTypeTextMessageContent] < 2 {
				t.Errorf("stream 20: %d content events; the deltas should stream", seen[events.EventTypeTextMessageContent])
			}
			// Every event of a plain text run is also readable by the
			// SDK's strict JSON codec.
			codec := aguijson.NewJSONDecoder(nil)
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if _, err := codec.Decode(context.Background(), []byte(l)); err != nil {
					t.Errorf("encoding/json decoder: %v\n%s", err, l)
				}
			}
		}
		if tc.prompt == "fail" {
			re := evs[len(evs)-1].(*events.RunErrorEvent)
			if re.Code == nil || *re.Code != "stream_error" {
				t.Errorf("fail: RUN_ERROR %+v", re)
			}
		}
	}
}

func TestHeadlessSessionIDResumesWithASnapshot(t *testing.T) {
	t.Parallel()
	home, project := hlProject(t)
	out, _, code := runHL(t, "", "-o", "json", "think about resumes")
	if code != 0 {
		t.Fatalf("first run: exit %d", code)
	}
	id := jsonLines(t, out)[0]["conversation_id"].(string)

	out, errOut, code := runHL(t, "", "--output", "ag-ui", "--session-id", id, "stream 3")
	if code != 0 {
		t.Fatalf("resumed run: exit %d\n%s", code, errOut)
	}
	evs := aguiEvents(t, out)
	checkBracketed(t, evs)
	snap, ok := evs[0].(*events.MessagesSnapshotEvent)
	if !ok {
		t.Fatalf("first event is %s, not MESSAGES_SNAPSHOT", evs[0].Type())
	}
	var roles []string
	for _, m := range snap.Messages {
		roles = append(roles, string(m.Role))
	}
	if strings.Join(roles, ",") != "user,reasoning,assistant" {
		t.Fatalf("snapshot roles %v", roles)
	}
	if c, _ := snap.Messages[0].ContentString(); c != "think about resumes" {
		t.Errorf("snapshot user message %q", c)
	}
	if rs := evs[1].(*events.RunStartedEvent); rs.ThreadIDValue != id {
		t.Errorf("the run continues thread %q, want %q", rs.ThreadIDValue, id)
	}

	// The conversation grew instead of a new one appearing.
	st, err := store.Open(config.ConversationsDir(home, project), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := st.List()
	conv, err := st.Load(id)
	if err != nil || len(list) != 1 || len(conv.Messages) != 4 || conv.Messages[2].Content != "stream 3" {
		t.Fatalf("stored: %d conversations, %+v, %v", len(list), conv.Messages, err)
	}

	out, _, _ = runHL(t, "", "-o", "json", "--session-id", id, "stream 2")
	if first := jsonLines(t, out)[0]; first["resumed"] != true || first["conversation_id"] != id {
		t.Errorf("json first line on resume: %v", first)
	}

	out, _, code = runHL(t, "", "-o", "json", "--session-id", id[:6], "stream 2")
	if first := jsonLines(t, out)[0]; code != 0 || first["conversation_id"] != id {
		t.Errorf("resume by a prefix of the id: exit %d, %v", code, first)
	}
	if _, errOut, code := runHL(t, "", "--session-id", id[:3], "hello"); code != 2 || !strings.Contains(errOut, "too short") {
		t.Errorf("a 3-character prefix: exit %d\n%s", code, errOut)
	}

	out, errOut, code = runHL(t, "", "--session-id", "no-such-id", "hello")
	if code != 2 || out != "" || !strings.Contains(errOut, `no stored conversation`) || !strings.Contains(errOut, `"no-such-id"`) {
		t.Fatalf("unknown id: exit %d\nstdout:%q\nstderr:\n%s", code, out, errOut)
	}
}

var requestIDLine = regexp.MustCompile(`"type":"approval_request","request_id":"([^"]+)"`)

func TestHeadlessApprovalsOnStdin(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	_, project := hlProject(t)
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(project, name))
		return err == nil
	}

	t.Run("approve", func(t *testing.T) {
		c := startHL(t, "-o", "json", "run touch approved.txt")
		id := c.stdout.waitFor(t, requestIDLine)[1]
		c.send(t, `{"type":"approval_response","request_id":"not-pending","action":"approve"}`)
		c.send(t, `{"type":"approval_response","request_id":"`+id+`","action":"approve"}`)
		if code := c.wait(t); code != 0 {
			t.Fatalf("exit %d\n%s", code, c.stderr)
		}
		lines := jsonLines(t, c.stdout.String())
		res := ofType(lines, "approval_resolved")
		if len(res) != 1 || res[0]["request_id"] != id || res[0]["decision"] != "approved" || res[0]["by"] != "headless" {
			t.Fatalf("approval_resolved %v", res)
		}
		req := ofType(lines, "approval_request")[0]
		if req["tool_name"] != "Bash" || req["tool_args"] != `{"command":"touch approved.txt"}` || req["answerable"] != true || !strings.Contains(req["why"].(string), "allowlist") {
			t.Errorf("approval_request %v", req)
		}
		if r := ofType(lines, "tool_result"); len(r) != 1 || r[0]["ok"] != true {
			t.Errorf("tool_result %v", r)
		}
		if !exists("approved.txt") {
			t.Error("the approved command did not run")
		}
		if !strings.Contains(c.stderr.String(), `no approval request "not-pending" is pending`) {
			t.Errorf("the unknown id was not noted:\n%s", c.stderr)
		}
	})

	t.Run("reject", func(t *testing.T) {
		c := startHL(t, "-o", "json", "run touch rejected.txt")
		id := c.stdout.waitFor(t, requestIDLine)[1]
		c.send(t, `{"type":"approval_response","request_id":"`+id+`","action":"reject"}`)
		if code := c.wait(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		lines := jsonLines(t, c.stdout.String())
		if r := ofType(lines, "approval_resolved"); len(r) != 1 || r[0]["decision"] != "rejected" || r[0]["reason"] != "rejected on stdin" {
			t.Fatalf("approval_resolved %v", r)
		}
		if r := ofType(lines, "tool_result"); len(r) != 1 || r[0]["ok"] != false {
			t.Errorf("tool_result %v", r)
		}
		if exists("rejected.txt") {
			t.Error("the rejected command ran")
		}
	})

	t.Run("unknown action rejects", func(t *testing.T) {
		c := startHL(t, "-o", "json", "run touch maybe.txt")
		id := c.stdout.waitFor(t, requestIDLine)[1]
		c.send(t, `{"type":"approval_response","request_id":"`+id+`","action":"sure"}`)
		c.wait(t)
		if exists("maybe.txt") {
			t.Error("an unknown action approved the call")
		}
	})

	t.Run("text y and n", func(t *testing.T) {
		c := startHL(t, "run touch yes.txt; run touch no.txt")
		c.stderr.waitFor(t, regexp.MustCompile(`answer on stdin: y to approve`))
		c.send(t, "y")
		c.stderr.waitFor(t, regexp.MustCompile(`(?s)approved on stdin.*Approval needed: Bash \{"command":"touch no.txt"\}`))
		c.send(t, "n")
		if code := c.wait(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		if !exists("yes.txt") || exists("no.txt") {
			t.Fatalf("y/n answered the wrong calls:\n%s\n%s", c.stdout, c.stderr)
		}
		out := c.stdout.String()
		if !strings.Contains(out, "✓ Bash (") || !strings.Contains(out, "✗ Bash") || strings.Contains(out, "Approval needed") {
			t.Errorf("stdout:\n%s", out)
		}
	})

	t.Run("stdin closed rejects", func(t *testing.T) {
		out, errOut, code := runHL(t, "", "-o", "json", "run touch eof.txt")
		lines := jsonLines(t, out)
		if r := ofType(lines, "approval_resolved"); code != 0 || len(r) != 1 || r[0]["decision"] != "rejected" || r[0]["reason"] != "stdin closed" {
			t.Fatalf("exit %d %v\n%s", code, r, errOut)
		}
		if exists("eof.txt") {
			t.Error("ran after stdin closed")
		}
	})

	t.Run("prompt from stdin cannot approve", func(t *testing.T) {
		out, _, code := runHL(t, "run touch piped.txt\n", "-o", "json", "-")
		lines := jsonLines(t, out)
		req := ofType(lines, "approval_request")
		res := ofType(lines, "approval_resolved")
		if code != 0 || len(req) != 1 || req[0]["answerable"] != false || len(res) != 1 || !strings.Contains(res[0]["reason"].(string), "prompt was read from stdin") {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if exists("piped.txt") {
			t.Error("ran without an answer")
		}
	})

	t.Run("auto mode", func(t *testing.T) {
		// stdin stays open and silent: an approval would hang the run.
		c := startHL(t, "-o", "json", "--mode", "auto", "run touch auto.txt")
		if code := c.wait(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		lines := jsonLines(t, c.stdout.String())
		if len(ofType(lines, "approval_request")) != 0 || lines[0]["mode"] != "auto" || !exists("auto.txt") {
			t.Fatalf("auto mode asked or did not run:\n%s", c.stdout)
		}
		// The deny list still asks in auto mode.
		out, _, _ := runHL(t, "", "-o", "json", "--mode", "auto", "run sudo true")
		if len(ofType(jsonLines(t, out), "approval_request")) != 1 {
			t.Fatalf("a denied command ran without asking:\n%s", out)
		}
	})

	t.Run("ag-ui announces approvals as CUSTOM events", func(t *testing.T) {
		c := startHL(t, "-o", "ag-ui", "run touch agui.txt")
		id := c.stdout.waitFor(t, regexp.MustCompile(`"name":"infer.approval_request","value":\{"request_id":"([^"]+)"`))[1]
		c.send(t, `{"type":"approval_response","request_id":"`+id+`","action":"approve"}`)
		if code := c.wait(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		evs := aguiEvents(t, c.stdout.String())
		checkBracketed(t, evs)
		var names []string
		for _, e := range evs {
			if ce, ok := e.(*events.CustomEvent); ok {
				names = append(names, ce.Name)
			}
		}
		if strings.Join(names, ",") != "infer.approval_request,infer.approval_resolved" || !exists("agui.txt") {
			t.Fatalf("custom events %v", names)
		}
	})
}

func TestHeadlessUsageErrorsExitTwo(t *testing.T) {
	t.Parallel()
	hlProject(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--output", "yaml", "hi"}, `unknown output format "yaml"`},
		{[]string{"--output", "json", "--format", "text", "hi"}, "disagree"},
		{[]string{"--mode", "reckless", "hi"}, `unknown mode "reckless"`},
		{[]string{"--model", "nobody/nothing", "hi"}, `unknown provider "nobody" in "nobody/nothing"`},
		{[]string{"   "}, "the prompt is empty"},
		{[]string{"/clear"}, "runs nothing"},
		{nil, "the prompt is empty"},
	} {
		out, errOut, code := runHL(t, "", tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s", tc.args, code, out, errOut)
		}
	}
	if _, errOut, code := runHL(t, "", "-"); code != 2 || !strings.Contains(errOut, "the prompt is empty") {
		t.Errorf("empty stdin prompt: exit %d\n%s", code, errOut)
	}
}

func TestHeadlessInterruptExits130(t *testing.T) {
	t.Parallel()
	hlProject(t)
	c := startHL(t, "-o", "json", "stream 100000")
	c.stdout.waitFor(t, regexp.MustCompile(`"type":"text"`))
	c.cancel() // what SIGINT does to run's context in main
	if code := c.wait(t); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, c.stderr)
	}
	lines := jsonLines(t, c.stdout.String())
	end := lines[len(lines)-1]
	if end["type"] != "run_error" || end["code"] != "interrupted" {
		t.Fatalf("last line %v", end)
	}
	if strings.Contains(joinedDeltas(lines, "text"), "100000") {
		t.Fatal("the stream ran to its end")
	}
	if !strings.Contains(c.stderr.String(), "infer: interrupted") {
		t.Errorf("stderr:\n%s", c.stderr)
	}
}

// TestHeadlessBinaryExitCodes runs the built binary: SIGINT mid-stream
// exits 130 after the run's end was printed; failures and usage errors
// exit 1 and 2.
func TestHeadlessBinaryExitCodes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	bin := inferBinary(t)
	home, project := t.TempDir(), t.TempDir()
	command := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"headless"}, args...)...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "INFER_HOME="+home)
		return cmd
	}

	signalStreamingHeadless(t, home, project, syscall.SIGINT)

	for _, tc := range []struct {
		args []string
		code int
	}{{[]string{"think about x"}, 0}, {[]string{"fail"}, 1}, {[]string{"--output", "xml", "hi"}, 2}} {
		err := command(tc.args...).Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d", tc.args, code, tc.code)
		}
	}
}

var bridgeURL = regexp.MustCompile(`url=(ws://127\.0\.0\.1:\d+/ws)`)

// watcher is a simulated extension connected to a headless run's bridge;
// it keeps every frame it received.
type watcher struct {
	client *sim.Client
	frames *sim.Subscription
	mu     sync.Mutex
	raw    []string
}

func watch(t *testing.T, url, token string) *watcher {
	t.Helper()
	w := &watcher{}
	w.client = sim.NewClient(sim.ClientOptions{URL: url, Token: token, Browser: &sim.Minimal{}, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		OnFrame: func(f wire.Frame) {
			b, _ := json.Marshal(f)
			w.mu.Lock()
			w.raw = append(w.raw, f.FrameType()+" "+string(b))
			w.mu.Unlock()
		}})
	w.frames = w.client.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.client.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; w.frames.Close() })
	wctx, wcancel := context.WithTimeout(ctx, hlGuard)
	defer wcancel()
	if err := w.client.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *watcher) received() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.raw...)
}

func TestHeadlessBridgeLetsThePanelWatchAndAnswer(t *testing.T) {
	needSandbox(t)
	home, project := hlProject(t)
	token := withBridge(t, home, config.DefaultPort)
	c := startHL(t, "--port", "0", "--verbose", "-o", "json", "run touch panel.txt")
	url := c.stderr.waitFor(t, bridgeURL)[1]
	w := watch(t, url, token)
	ctx, cancel := context.WithTimeout(context.Background(), hlGuard)
	defer cancel()
	// A request opened before the panel connected is re-sent to it.
	req, err := sim.WaitFor[wire.ApprovalRequest](ctx, w.frames, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.client.Approve(ctx, req.RequestID); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, c.stderr)
	}
	res := ofType(jsonLines(t, c.stdout.String()), "approval_resolved")
	if len(res) != 1 || res[0]["by"] != "panel" || res[0]["decision"] != "approved" {
		t.Fatalf("approval_resolved %v", res)
	}
	if _, err := os.Stat(filepath.Join(project, "panel.txt")); err != nil {
		t.Fatal("the panel's approval did not run the command")
	}
	sawChat := false
	for _, f := range w.received() {
		sawChat = sawChat || strings.HasPrefix(f, wire.ChatEvent{}.FrameType()+" ")
	}
	if !sawChat {
		t.Fatal("the panel saw no chat events of the run")
	}
}

// TestHeadlessSecretsNeverLeak puts canary API keys in the environment,
// runs the offline model and a provider whose server echoes the
// Authorization header in its 401, with a simulated extension watching,
// and looks for the keys everywhere infer writes: stdout, stderr, the
// frames the extension received, and every file under the home, the
// project and the model cache.
func TestHeadlessSecretsNeverLeak(t *testing.T) {
	needSandbox(t)
	home, project := hlProject(t)
	openaiKey := "sk-canary-" + randomHex(t)
	anthropicKey := "sk-ant-canary-" + randomHex(t)
	t.Setenv("OPENAI_API_KEY", openaiKey)
	t.Setenv("ANTHROPIC_API_KEY", anthropicKey)

	release := make(chan struct{})
	var seenMu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seenMu.Lock()
		seen = append(seen, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
		seenMu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			// Hold the answer until the extension watches.
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		msg := fmt.Sprintf("invalid credentials: Authorization=%s x-api-key=%s", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
	}))
	defer srv.Close()
	// Discovery of the built-in providers goes to the same server instead
	// of the internet.
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	token := withBridge(t, home, config.DefaultPort)
	cfg := fmt.Sprintf("providers:\n  canary:\n    kind: openai-compatible\n    base_url: %s/v1\n    api_key_env: OPENAI_API_KEY\n    models: [echo]\n", srv.URL)
	if err := os.WriteFile(config.ConfigPath(home), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	var outputs []string
	var frames []string

	// The offline model, with the extension approving a command.
	c := startHL(t, "--port", "0", "--verbose", "--model", "offline/demo", "-o", "json", "run echo hello; run touch secret-test.txt")
	w := watch(t, c.stderr.waitFor(t, bridgeURL)[1], token)
	ctx, cancel := context.WithTimeout(context.Background(), hlGuard)
	defer cancel()
	req, err := sim.WaitFor[wire.ApprovalRequest](ctx, w.frames, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.client.Approve(ctx, req.RequestID)
	if code := c.wait(t); code != 0 {
		t.Fatalf("offline run: exit %d\n%s", code, c.stderr)
	}
	outputs = append(outputs, c.stdout.String(), c.stderr.String())
	frames = append(frames, w.received()...)

	// The provider, refusing the key and echoing it back.
	c = startHL(t, "--port", "0", "--verbose", "--model", "canary/echo", "-o", "ag-ui", "hello provider")
	w = watch(t, c.stderr.waitFor(t, bridgeURL)[1], token)
	close(release)
	if code := c.wait(t); code != 1 {
		t.Fatalf("provider run: exit %d, want 1\n%s", code, c.stderr)
	}
	outputs = append(outputs, c.stdout.String(), c.stderr.String())
	frames = append(frames, w.received()...)
	evs := aguiEvents(t, c.stdout.String())
	re, ok := checkBracketed(t, evs).(*events.RunErrorEvent)
	if !ok || re.Code == nil || *re.Code != "auth" {
		t.Fatalf("the provider run should end in an auth error: %+v", evs[len(evs)-1])
	}
	if !strings.Contains(re.Message, "[redacted]") {
		t.Errorf("the server's echo should reach the message, redacted: %q", re.Message)
	}

	// The same failure seen by an extension through infer serve, where
	// the bridge outlives the run so the RUN_ERROR frame surely arrives.
	s := serveInProcess(t, home, project)
	if m, err := s.client.SelectModel(s.ctx(), "canary/echo"); err != nil || m.Current != "canary/echo" {
		t.Fatalf("select canary/echo: %+v %v", m, err)
	}
	s.client.SendUserMessage(s.ctx(), "hello again")
	served := s.runUntilEnd()
	if last := served[len(served)-1]; last.Type != "RUN_ERROR" {
		t.Fatalf("serve run ended with %+v", last)
	}
	for _, e := range served {
		b, _ := json.Marshal(e)
		frames = append(frames, string(b))
	}

	seenMu.Lock()
	sawKey := false
	for _, h := range seen {
		sawKey = sawKey || h == "Bearer "+openaiKey
	}
	seenMu.Unlock()
	if !sawKey {
		t.Fatal("the provider never received the key, so this test proves nothing")
	}

	secrets := map[string]string{"OPENAI_API_KEY": openaiKey, "ANTHROPIC_API_KEY": anthropicKey}
	for name, secret := range secrets {
		for i, o := range outputs {
			for _, line := range strings.Split(o, "\n") {
				if strings.Contains(line, secret) {
					t.Errorf("%s leaked in output %d: %s", name, i, line)
				}
			}
		}
		for _, f := range frames {
			if strings.Contains(f, secret) {
				t.Errorf("%s leaked in a frame the extension received: %s", name, f)
			}
		}
	}
	dirs := []string{home, project}
	if cache, err := config.CacheDir("models"); err == nil {
		dirs = append(dirs, cache)
	}
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			for name, secret := range secrets {
				if bytes.Contains(b, []byte(secret)) {
					t.Errorf("%s leaked into %s", name, p)
				}
			}
			return nil
		})
	}
}

func randomHex(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestModelMistakeExitsTwoInEveryCommand: a --model that cannot be used
// is the same command-line mistake for `infer headless` and for `infer`
// (the workspace), so both exit 2 as docs/headless.md says, and the
// message names the model once.
func TestModelMistakeExitsTwoInEveryCommand(t *testing.T) {
	t.Cleanup(xdg.Reload) // runs after the variables below are restored
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	xdg.Reload()
	t.Setenv("OPENAI_API_KEY", "")
	// runTUI below reads the process's home and working directory.
	newHome(t)
	t.Chdir(t.TempDir())

	check := func(what string, code int, msg string) {
		t.Helper()
		if code != exitUsage {
			t.Errorf("%s: exit %d, want %d\n%s", what, code, exitUsage, msg)
		}
		if n := strings.Count(msg, "openai/gpt-4o"); n != 1 || !strings.Contains(msg, "no API key") {
			t.Errorf("%s: the message should name the model once and say what is missing:\n%s", what, msg)
		}
	}
	_, errOut, code := infer(t, "headless", "--no-bridge", "--model", "openai/gpt-4o", "hi")
	check("infer headless", code, errOut)

	// `infer` opens the workspace only in a terminal, so its run is called
	// as the root command calls it once the terminal is there.
	var stderr bytes.Buffer
	err := runTUI(context.Background(), &stderr, tuiOptions{model: "openai/gpt-4o"})
	var coded exitError
	if !errors.As(err, &coded) {
		t.Fatalf("infer --model: %v is not an error with an exit code", err)
	}
	check("infer", coded.ExitCode(), err.Error())

	// A model from config.yaml is not a command-line mistake: it fails
	// with 1, and still says the model once.
	if err := os.MkdirAll(filepath.Join(os.Getenv(config.HomeEnv)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config.ConfigPath(os.Getenv(config.HomeEnv)), []byte("model: openai/gpt-4o\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = infer(t, "headless", "--no-bridge", "hi")
	if code != exitFailure || strings.Count(errOut, "openai/gpt-4o") != 1 {
		t.Errorf("model from config.yaml: exit %d\n%s", code, errOut)
	}
}
