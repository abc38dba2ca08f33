package main

import (
	"context"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
	"github.com/infer-workspace/infer/sim"
)

func (s *served) setMode(mode string) {
	s.t.Helper()
	got, err := s.client.SetMode(s.ctx(), mode)
	if err != nil || got.Mode != mode {
		s.t.Fatalf("set_mode %s: %+v %v", mode, got, err)
	}
}

func (s *served) nextApproval() wire.ApprovalRequest {
	s.t.Helper()
	a, err := sim.WaitFor[wire.ApprovalRequest](s.ctx(), s.frames, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	return a
}

// toolMessages returns the tool messages of the active conversation.
func (s *served) toolMessages() []string {
	var out []string
	for _, it := range s.app.Workspace.Snapshot().Transcript.Items {
		if it.Kind == transcript.Tool && it.Done {
			out = append(out, it.Call.Result)
		}
	}
	return out
}

// callOutcomes maps each answered call of snap to whether it succeeded.
func callOutcomes(snap session.Snapshot) map[string]bool {
	out := map[string]bool{}
	for _, it := range snap.Transcript.Items {
		if it.Kind == transcript.Tool && it.Done {
			out[it.ID] = it.Call.OK
		}
	}
	return out
}

func TestToolsBrowserRoundTripThroughTheExtension(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	s.setMode("auto")
	s.client.SendUserMessage(s.ctx(), "open demo.infer.localhost; read; tabs; screenshot")
	evs := s.runUntilEnd()
	if evs[len(evs)-1].Type != "RUN_FINISHED" {
		t.Fatalf("run %+v", evs[len(evs)-1])
	}
	snap := s.app.Workspace.Snapshot()
	if len(callOutcomes(snap)) != 4 {
		t.Fatalf("tool results %+v", callOutcomes(snap))
	}
	for id, ok := range callOutcomes(snap) {
		if !ok {
			t.Fatalf("call %s failed: %q", id, s.toolMessages())
		}
	}
	msgs := s.toolMessages()
	if !strings.Contains(msgs[0], "http://demo.infer.localhost") || !strings.Contains(msgs[1], sim.MinimalPageText) {
		t.Fatalf("navigate/read results: %q", msgs[:2])
	}
	// The screenshot landed in the project's artifacts and is served.
	art := config.ArtifactsDir(s.home, s.project)
	var shot string
	filepath.WalkDir(art, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".png") {
			shot = p
		}
		return nil
	})
	if shot == "" {
		t.Fatalf("no screenshot under %s; result %q", art, msgs[3])
	}
	rel, _ := filepath.Rel(art, shot)
	if !strings.Contains(msgs[3], filepath.ToSlash(rel)) {
		t.Fatalf("the model was not told where the screenshot is: %q", msgs[3])
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/artifacts/%s", s.app.Seat.Port(), filepath.ToSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("artifact served %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if _, err := png.Decode(resp.Body); err != nil {
		t.Fatalf("served screenshot is not a PNG: %v", err)
	}
}

// TestApprovalRaceBetweenPanelAndTerminal answers the same request from the
// panel and the terminal at once, many times: exactly one answer wins, the
// panel always hears approval_resolved, and the tool runs only if the
// approval won.
func TestApprovalRaceBetweenPanelAndTerminal(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	// Each round starts a sandbox for the approved command (about a
	// second); ten rounds race the two answers often enough.
	const rounds = 10
	for i := 0; i < rounds; i++ {
		file := fmt.Sprintf("raced-%d.txt", i)
		s.client.SendUserMessage(s.ctx(), "run touch "+file)
		req := s.nextApproval()
		var terminalWon atomic.Bool
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if s.app.Workspace.Answer(req.RequestID, tools.Decision{Kind: tools.AllowOnce}, tools.OriginTerminal) {
				terminalWon.Store(true)
			}
		}()
		go func() {
			defer wg.Done()
			s.client.Reject(s.ctx(), req.RequestID)
		}()
		wg.Wait()
		if _, err := sim.WaitFor(s.ctx(), s.frames, func(f wire.ApprovalResolved) bool { return f.RequestID == req.RequestID }); err != nil {
			t.Fatalf("round %d: no approval_resolved: %v", i, err)
		}
		evs := s.runUntilEnd()
		_, statErr := os.Stat(filepath.Join(s.project, file))
		ran := statErr == nil
		if ran != terminalWon.Load() {
			t.Fatalf("round %d: terminal won=%v but the command ran=%v (%+v)", i, terminalWon.Load(), ran, evs)
		}
	}
}

func TestPendingApprovalIsResentToAReconnectingExtension(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	s := serveInProcess(t, "", "")
	s.client.SendUserMessage(s.ctx(), "run touch after-reconnect.txt")
	first := s.nextApproval()
	s.stop() // the extension goes away with the request open
	<-s.done

	c2, frames := connect(t, s.app.Seat.URL(), s.app.BrowserUse.Extension.Token)
	again, err := sim.WaitFor[wire.ApprovalRequest](s.ctx(), frames, nil)
	if err != nil || again.RequestID != first.RequestID || again.ToolName != "Bash" {
		t.Fatalf("re-sent %+v %v (first %+v)", again, err, first)
	}
	c2.Approve(s.ctx(), again.RequestID)
	if _, err := sim.WaitFor(s.ctx(), frames, func(f wire.ChatEvent) bool { return strings.Contains(string(f.Event), "RUN_FINISHED") }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.project, "after-reconnect.txt")); err != nil {
		t.Fatal("approved after reconnect but did not run")
	}
}

func TestInterruptDuringAToolCall(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	s.setMode("auto")
	s.client.SendUserMessage(s.ctx(), "run sleep 30")
	if _, err := sim.WaitFor(s.ctx(), s.frames, func(f wire.ChatEvent) bool { return decodeChat(t, f).Type == "TOOL_CALL_END" }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.client.Interrupt(s.ctx())
	evs := s.runUntilEnd()
	if last := evs[len(evs)-1]; last.Type != "RUN_ERROR" || *last.Code != "interrupted" {
		t.Fatalf("terminal %+v", last)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("the sleep was not killed on interrupt")
	}
	if _, err := sim.WaitFor[wire.Interrupted](s.ctx(), s.frames, nil); err != nil {
		t.Fatal(err)
	}
	if msgs := s.toolMessages(); len(msgs) != 1 {
		t.Fatalf("tool messages %q", msgs)
	}
}

func TestInterruptDuringAnApproval(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	s.client.SendUserMessage(s.ctx(), "run touch never.txt")
	req := s.nextApproval()
	s.client.Interrupt(s.ctx())
	if _, err := sim.WaitFor(s.ctx(), s.frames, func(f wire.ApprovalResolved) bool { return f.RequestID == req.RequestID }); err != nil {
		t.Fatal(err)
	}
	s.runUntilEnd()
	if _, err := os.Stat(filepath.Join(s.project, "never.txt")); err == nil {
		t.Fatal("an interrupted approval ran the command")
	}
	if len(s.app.Workspace.PendingApprovals()) != 0 {
		t.Fatal("approval still pending")
	}
}

func TestPlanModeRefusesAWriteWithoutAsking(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	s.setMode("plan")
	later := s.client.Subscribe()
	defer later.Close()
	s.client.SendUserMessage(s.ctx(), "run touch planned.txt")
	s.runUntilEnd()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		f, err := later.Next(ctx)
		cancel()
		if err != nil {
			break
		}
		if _, ok := f.(wire.ApprovalRequest); ok {
			t.Fatal("plan mode asked")
		}
	}
	if msgs := s.toolMessages(); len(msgs) != 1 || !strings.Contains(msgs[0], "plan mode") {
		t.Fatalf("refusal %q", msgs)
	}
}

func TestAutoModeObeysTheDenyList(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	s := serveInProcess(t, "", "")
	s.setMode("auto")
	s.client.SendUserMessage(s.ctx(), "run sudo ls")
	req := s.nextApproval()
	if req.ToolName != "Bash" || !strings.Contains(req.ToolArgs, "sudo ls") {
		t.Fatalf("%+v", req)
	}
	s.client.Reject(s.ctx(), req.RequestID)
	s.runUntilEnd()
	if msgs := s.toolMessages(); !strings.Contains(msgs[0], "rejected") {
		t.Fatalf("the model was not told: %q", msgs)
	}
	// An ordinary command runs without asking in auto mode.
	s.client.SendUserMessage(s.ctx(), "run touch auto-ok.txt")
	s.runUntilEnd()
	if _, err := os.Stat(filepath.Join(s.project, "auto-ok.txt")); err != nil {
		t.Fatal("auto mode did not run an ordinary command")
	}
}

func TestBangCommandFromThePanelAsksFirst(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	s := serveInProcess(t, "", "")
	s.client.SendUserMessage(s.ctx(), "!touch bang.txt")
	req := s.nextApproval()
	if _, err := os.Stat(filepath.Join(s.project, "bang.txt")); err == nil {
		t.Fatal("ran before approval")
	}
	s.client.Approve(s.ctx(), req.RequestID)
	s.runUntilEnd()
	if _, err := os.Stat(filepath.Join(s.project, "bang.txt")); err != nil {
		t.Fatal("approved !cmd did not run")
	}
}

func TestToolRequestsFromThePanel(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	s := serveInProcess(t, "", "")
	os.WriteFile(filepath.Join(s.project, "present.txt"), []byte("hello file\n"), 0o644)

	ok, err := s.client.ToolRequest(s.ctx(), "Bash", `{"command":"cat present.txt"}`)
	if err != nil || !ok.Success || !strings.Contains(ok.Output, "hello file") {
		t.Fatalf("zero exit: %+v %v", ok, err)
	}
	bad, err := s.client.ToolRequest(s.ctx(), "Bash", `{"command":"cat absent.txt"}`)
	if err != nil || bad.Success || !strings.Contains(bad.Output, "absent.txt") {
		t.Fatalf("non-zero exit must fail with output: %+v %v", bad, err)
	}
	unknown, err := s.client.ToolRequest(s.ctx(), "Teleport", `{}`)
	if err != nil || unknown.Success || unknown.Error == "" {
		t.Fatalf("unknown tool: %+v %v", unknown, err)
	}
	garbled, err := s.client.ToolRequest(s.ctx(), "Read", `{"path":`)
	if err != nil || garbled.Success || !strings.Contains(garbled.Error+garbled.Output, "JSON") {
		t.Fatalf("bad JSON: %+v %v", garbled, err)
	}

	// A call that needs approval: the panel denies it and still gets one
	// failed result for the id.
	type result struct {
		r   wire.ToolResult
		err error
	}
	res := make(chan result, 1)
	go func() {
		r, err := s.client.ToolRequest(s.ctx(), "Bash", `{"command":"touch denied.txt"}`)
		res <- result{r, err}
	}()
	req := s.nextApproval()
	s.client.Reject(s.ctx(), req.RequestID)
	got := <-res
	if got.err != nil || got.r.Success || got.r.Error == "" {
		t.Fatalf("denial: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(s.project, "denied.txt")); err == nil {
		t.Fatal("denied call ran")
	}
	// Raw frames with a malformed body are answered or dropped, never a
	// closed socket: the connection still works afterwards.
	s.client.SendRaw(s.ctx(), []byte(`{"type":"tool_request","id":"x1","tool_name":"Bash","tool_args":{"command":"ls"}}`))
	if _, err := s.client.ListHistory(s.ctx()); err != nil {
		t.Fatalf("connection lost after a malformed tool_request: %v", err)
	}
}

// TestPanelToolRequestStopsWhenTheExtensionLeaves: the contract drops a
// tool_result whose connection is gone, so the call itself is cancelled.
func TestPanelToolRequestStopsWhenTheExtensionLeaves(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	s.setMode("auto")
	go s.client.ToolRequest(context.Background(), "Bash", `{"command":"sleep 3 && touch too-late.txt"}`)
	deadline := time.Now().Add(10 * time.Second)
	// The command itself, not bwrap's or bash's command line naming it.
	for !strings.Contains(psTree(), "\nsleep 3 \n") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	s.stop() // the extension goes away while the command runs
	<-s.done
	time.Sleep(4 * time.Second) // longer than the command would have taken
	if _, err := os.Stat(filepath.Join(s.project, "too-late.txt")); err == nil {
		t.Fatal("the tool request kept running after its connection closed")
	}
}

// psTree lists the command lines of running processes.
func psTree() string {
	entries, _ := os.ReadDir("/proc")
	var b strings.Builder
	for _, e := range entries {
		if cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil {
			b.WriteString(strings.ReplaceAll(string(cmd), "\x00", " "))
			b.WriteByte('\n')
		}
	}
	return b.String()
}
