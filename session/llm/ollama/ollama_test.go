package ollama

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

const cloudKey = "ol-test-0123456789abcdef"

// fake starts a server in Ollama's wire format and a local provider
// pointed at it whose retries record waits instead of sleeping.
func fake(t *testing.T, replies ...llmtest.Reply) (*llmtest.Server, *Provider) {
	t.Helper()
	srv := llmtest.New(t, replies...)
	return srv, New(Config{Name: "ollama", BaseURL: srv.URL, HTTPClient: srv.Client, Policy: llmtest.Policy(nil)})
}

// lines answers with a stream of JSON lines, flushing each.
func lines(ls ...string) llmtest.Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, l := range ls {
			fmt.Fprintln(w, l)
			w.(http.Flusher).Flush()
		}
	}
}

// recorded replays a stream file from testdata/streams.
func recorded(t *testing.T, name string) llmtest.Reply {
	return llmtest.Stream(t, name, "application/x-ndjson")
}

func content(s string) string {
	b, _ := json.Marshal(s)
	return `{"model":"m","message":{"role":"assistant","content":` + string(b) + `},"done":false}`
}

const done = `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":11,"eval_count":4}`

// show answers /api/show with the given thinking object.
func show(thinking string) llmtest.Reply {
	return llmtest.JSON(`{"capabilities":["completion","tools","thinking"],"thinking":` + thinking + `,"details":{"family":"x"}}`)
}

func userReq(model string) llm.Request {
	return llm.Request{Model: model, System: "be brief", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
}

func TestStreamsTextThinkingAndUsage(t *testing.T) {
	srv, p := fake(t, lines(
		`{"model":"m","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}`,
		content("Hel"), content("lo"), done))
	ds, c, err := llmtest.Collect(t, p, userReq("llama3.2"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != "Hello" || c.Reasoning != "hmm" || c.FinishReason != "stop" || c.Usage != (llm.Usage{InputTokens: 11, OutputTokens: 4}) {
		t.Fatalf("completion %+v", c)
	}
	if llmtest.Joined(ds, llm.TextDelta) != "Hello" || llmtest.Joined(ds, llm.ReasoningDelta) != "hmm" {
		t.Fatalf("deltas %+v", ds)
	}
	rs := srv.Requests()
	if len(rs) != 1 || rs[0].Path != "/api/chat" {
		t.Fatalf("auto effort asked more than /api/chat: %+v", rs)
	}
	b := rs[0].Body
	if b["stream"] != true || b["think"] != nil || b["options"] != nil || rs[0].Header.Get("Authorization") != "" {
		t.Fatalf("body %v header %v", b, rs[0].Header)
	}
	if llmtest.At(b, "messages", 0, "role") != "system" || llmtest.At(b, "messages", 1, "content") != "hi" {
		t.Fatalf("messages %v", b["messages"])
	}
}

func TestThinkFromAdvertisedControls(t *testing.T) {
	rows := []struct {
		thinking string
		effort   llm.Effort
		want     any
	}{
		{`{"values":["low","medium","high","max"],"default":"medium"}`, llm.EffortNone, "low"}, // Beam: no off control
		{`{"values":["Low","Medium","High","Max"]}`, llm.EffortHigh, "High"},
		{`{"values":["low","medium","high","max"]}`, llm.EffortAuto, nil},
		{`{"values":[false,true],"default":true}`, llm.EffortNone, false},
		{`{"values":[false,true]}`, llm.EffortMedium, true},
		{`{"values":[true]}`, llm.EffortNone, nil},
		{`{"values":[true]}`, llm.EffortLow, true},
		{`{"values":[false,"low","high"]}`, llm.EffortNone, false},
		{`{"values":[false,"low","high"]}`, llm.EffortMedium, nil},
		{`{"values":["turbo","calm"]}`, llm.EffortNone, nil}, // unknown names are not ordered
		{`{"values":["turbo","calm"]}`, llm.EffortLow, nil},
		{`{"values":"low"}`, llm.EffortNone, nil},
		{`{"values":[1,2]}`, llm.EffortLow, nil},
		{`{"values":[]}`, llm.EffortLow, nil},
		{`"yes"`, llm.EffortLow, nil},
		{``, llm.EffortLow, nil},
	}
	for _, r := range rows {
		if got := ThinkFor(r.effort, parseControls(json.RawMessage(r.thinking))); got != r.want {
			t.Errorf("ThinkFor(%s, %s) = %#v, want %#v", r.effort, r.thinking, got, r.want)
		}
	}
	if c := parseControls(json.RawMessage(`{"values":[false,"low"],"default":"low"}`)); c.Default != "low" || !c.Off || len(c.Levels) != 1 {
		t.Errorf("controls %+v", c)
	}
}

// Every explicit-effort turn asks /api/show afresh; what it advertises
// decides think, and options.temperature carries the temperature.
func TestExplicitEffortProbesEveryTurn(t *testing.T) {
	srv, p := fake(t,
		show(`{"values":["low","medium","high","max"],"default":"medium"}`), lines(content("a"), done),
		show(`{"values":[false,true]}`), lines(content("b"), done))
	req := userReq("beam:8b")
	req.Effort = llm.EffortNone
	temp := 0.3
	req.Temperature = &temp
	for range 2 {
		if _, _, err := llmtest.Collect(t, p, req); err != nil {
			t.Fatal(err)
		}
	}
	rs := srv.Requests()
	if len(rs) != 4 || rs[0].Path != "/api/show" || rs[1].Path != "/api/chat" || rs[2].Path != "/api/show" {
		t.Fatalf("requests %+v", rs)
	}
	if rs[0].Body["model"] != "beam:8b" {
		t.Fatalf("probe body %v", rs[0].Body)
	}
	if rs[1].Body["think"] != "low" || rs[3].Body["think"] != false {
		t.Fatalf("think %v then %v", rs[1].Body["think"], rs[3].Body["think"])
	}
	if got, _ := json.Marshal(rs[1].Body["options"]); string(got) != `{"temperature":0.3}` {
		t.Fatalf("options %s", got)
	}
}

// Metadata that is missing, malformed, unavailable or late leaves the
// model's default: no think at all.
func TestBadMetadataLeavesTheDefault(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for name, probe := range map[string]llmtest.Reply{
		"missing":     llmtest.JSON(`{"capabilities":["completion","thinking"]}`),
		"malformed":   show(`{"values":"low"}`),
		"not json":    llmtest.JSON(`<html>`),
		"unavailable": llmtest.Status(500, `{"error":"boom"}`),
		"late":        llmtest.Hang(release),
	} {
		srv := llmtest.New(t, probe, lines(content("x"), done))
		p := New(Config{BaseURL: srv.URL, HTTPClient: srv.Client, Policy: llmtest.Policy(nil), ProbeTimeout: 100 * time.Millisecond})
		req := userReq("m")
		req.Effort = llm.EffortHigh
		if _, _, err := llmtest.Collect(t, p, req); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		last := srv.Last()
		if _, has := last.Body["think"]; has || last.Path != "/api/chat" {
			t.Errorf("%s: think %v sent to %s", name, last.Body["think"], last.Path)
		}
	}
}

func TestRejectedThinkAndTemperatureAreRetriedWithout(t *testing.T) {
	srv, p := fake(t, show(`{"values":[false,true]}`),
		llmtest.Status(400, `{"error":"think value \"false\" is not supported for this model"}`),
		llmtest.Status(400, `{"error":"invalid option: temperature"}`),
		lines(content("ok"), done))
	req := userReq("m")
	req.Effort = llm.EffortNone
	temp := 1.2
	req.Temperature = &temp
	if _, _, err := llmtest.Collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	rs := srv.Requests()
	if len(rs) != 4 {
		t.Fatalf("%d requests", len(rs))
	}
	if _, has := rs[2].Body["think"]; has {
		t.Fatalf("think kept after its rejection: %v", rs[2].Body)
	}
	if _, has := rs[3].Body["options"]; has {
		t.Fatalf("temperature kept after its rejection: %v", rs[3].Body)
	}
}

func TestToolLoopSendsCallsAndAnswersBack(t *testing.T) {
	srv, p := fake(t, recorded(t, "tool_call.ndjson"), recorded(t, "answer.ndjson"))
	req := userReq("gpt-oss:20b")
	req.Tools = []llm.Tool{{Name: "BrowserRead", Description: "read", Parameters: json.RawMessage(`{"type":"object","properties":{"selector":{"type":"string"}}}`)}}
	ds, c, err := llmtest.Collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ToolCalls) != 1 || c.ToolCalls[0] != (llm.ToolCall{ID: "call_k3xq9b1w", Name: "BrowserRead", Arguments: `{"selector":"title"}`}) || c.FinishReason != "tool_calls" {
		t.Fatalf("completion %+v", c)
	}
	if d := ds[len(ds)-1]; d.Kind != llm.ToolCallDelta || d.ToolCall.Name != "BrowserRead" {
		t.Fatalf("delta %+v", d)
	}
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Reasoning: c.Reasoning, ToolCalls: c.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_k3xq9b1w", Content: "Example Domain"})
	if _, c2, err := llmtest.Collect(t, p, req); err != nil || c2.Text != `The page is titled "Example Domain".` {
		t.Fatalf("answer %q err %v", c2.Text, err)
	}
	msgs := srv.Last().Body["messages"]
	asst, _ := json.Marshal(llmtest.At(msgs, 2))
	if string(asst) != `{"content":"","role":"assistant","thinking":"The title is in the page; read it.","tool_calls":[{"function":{"arguments":{"selector":"title"},"name":"BrowserRead"},"id":"call_k3xq9b1w"}]}` {
		t.Fatalf("assistant message %s", asst)
	}
	tool, _ := json.Marshal(llmtest.At(msgs, 3))
	if string(tool) != `{"content":"Example Domain","role":"tool","tool_call_id":"call_k3xq9b1w","tool_name":"BrowserRead"}` {
		t.Fatalf("tool message %s", tool)
	}
	tools, _ := json.Marshal(srv.Last().Body["tools"])
	if string(tools) != `[{"function":{"description":"read","name":"BrowserRead","parameters":{"properties":{"selector":{"type":"string"}},"type":"object"}},"type":"function"}]` {
		t.Fatalf("tools %s", tools)
	}
}

func TestErrorsMapToTheSharedClasses(t *testing.T) {
	rows := []struct {
		reply llmtest.Reply
		kind  llm.ErrorKind
		says  string
	}{
		{llmtest.Status(404, `{"error":"model \"llama9\" not found, try pulling it first"}`), llm.ErrNotFound, "try pulling it first"},
		{llmtest.Status(401, `{"error":"unauthorized"}`), llm.ErrAuth, "OLLAMA_API_KEY"},
		{llmtest.Status(429, `{"error":"too many requests"}`), llm.ErrRateLimited, "429"},
		{llmtest.Status(500, `{"error":"llama runner process has terminated"}`), llm.ErrServer, "runner"},
		{llmtest.Status(400, `{"error":"invalid message format"}`), llm.ErrBadRequest, "invalid message format"},
	}
	for _, r := range rows {
		srv := llmtest.New(t, r.reply)
		p := New(Config{Name: "ollama_cloud", BaseURL: srv.URL, APIKey: cloudKey, RequireKey: true, KeyHint: "OLLAMA_API_KEY",
			HTTPClient: srv.Client, Policy: llmtest.Policy(nil)})
		_, _, err := llmtest.Collect(t, p, userReq("llama9"))
		if llmtest.Kind(t, err) != r.kind || !strings.Contains(err.Error(), r.says) || strings.Contains(err.Error(), cloudKey) {
			t.Errorf("kind %v err %v; want %v saying %q", llm.KindOf(err), err, r.kind, r.says)
		}
	}
	srv, p := fake(t, llmtest.Status(503, `{"error":"busy"}`), lines(content("fine"), done))
	if _, c, err := llmtest.Collect(t, p, userReq("m")); err != nil || c.Text != "fine" || len(srv.Requests()) != 2 {
		t.Fatalf("503 then ok: %q %v", c.Text, err)
	}
}

func TestBrokenStreamKeepsThePartialAnswer(t *testing.T) {
	for name, reply := range map[string]llmtest.Reply{
		"error line": lines(content("half an "), `{"error":"an error was encountered while running the model"}`),
		"not json":   lines(content("half an "), `data: {"x":1}`),
		"no done":    lines(content("half an ")),
		"cut": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintln(w, content("half an "))
			w.(http.Flusher).Flush()
			conn, buf, _ := w.(http.Hijacker).Hijack()
			_ = buf.Flush()
			_ = conn.Close()
		},
	} {
		srv, p := fake(t, reply)
		_, c, err := llmtest.Collect(t, p, userReq("m"))
		if llmtest.Kind(t, err) != llm.ErrStream || c.Text != "half an " {
			t.Errorf("%s: kind %v text %q err %v", name, llm.KindOf(err), c.Text, err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%s: %d requests", name, n)
		}
	}
}

func TestIdleAndCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	hang := func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, content("start "))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	srv := llmtest.New(t, hang)
	p := New(Config{BaseURL: srv.URL, HTTPClient: srv.Client, Policy: llmtest.Policy(nil), IdleTimeout: 200 * time.Millisecond})
	_, c, err := llmtest.Collect(t, p, userReq("m"))
	if llmtest.Kind(t, err) != llm.ErrStream || !strings.Contains(err.Error(), "stream_idle_timeout") || c.Text != "start " {
		t.Fatalf("idle: kind %v text %q err %v", llm.KindOf(err), c.Text, err)
	}
	_, p = fake(t, hang)
	ctx, cancel := context.WithCancel(context.Background())
	_, err = p.Stream(ctx, userReq("m"), func(llm.Delta) { cancel() })
	if err == nil || ctx.Err() == nil {
		t.Fatalf("cancel: %v", err)
	}
}

// Ollama Cloud sends its key everywhere and, without a key, fails at once
// instead of trying a local server.
func TestCloudNeedsItsKeyAndSendsIt(t *testing.T) {
	p := New(Config{Name: "ollama_cloud", BaseURL: CloudBaseURL, RequireKey: true, KeyHint: "OLLAMA_API_KEY"})
	if _, err := p.Stream(context.Background(), userReq("m"), func(llm.Delta) {}); llm.KindOf(err) != llm.ErrMissingKey || !strings.Contains(err.Error(), "OLLAMA_API_KEY") {
		t.Fatalf("err %v", err)
	}
	srv := llmtest.New(t, show(`{"values":[false,true]}`), lines(content("x"), done))
	p = New(Config{Name: "ollama_cloud", BaseURL: srv.URL, APIKey: cloudKey, RequireKey: true, HTTPClient: srv.Client, Policy: llmtest.Policy(nil)})
	req := userReq("gpt-oss:120b")
	req.Effort = llm.EffortLow
	if _, _, err := llmtest.Collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if r.Header.Get("Authorization") != "Bearer "+cloudKey {
			t.Fatalf("%s without the key", r.Path)
		}
	}
}

func TestListModelsFromTags(t *testing.T) {
	srv, p := fake(t, llmtest.JSON(`{"models":[{"name":"qwen3:8b","model":"qwen3:8b"},{"name":"deepseek-v4.1-flash:1017"},{"model":"llama3.2:latest"},{"name":"qwen3:8b"},
		{"name":"nomic-embed-text:latest"},{"name":"phonon:1b","capabilities":["speech"]},{"name":"clef:27b","capabilities":["completion","tools"]}]}`))
	ids, err := p.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, ",") != "deepseek-v4.1-flash:1017,clef:27b,llama3.2:latest,qwen3:8b" {
		t.Fatalf("ids %v", ids)
	}
	if r := srv.Last(); r.Method != http.MethodGet || r.Path != "/api/tags" {
		t.Fatalf("%s %s", r.Method, r.Path)
	}
	_, p = fake(t, llmtest.JSON(`<html>`))
	if _, err := p.ListModels(context.Background()); err == nil {
		t.Fatal("a list that is not Ollama's was accepted")
	}
}

func TestWebSearchThroughOllamaCloud(t *testing.T) {
	srv := llmtest.New(t, llmtest.JSON(`{"results":[{"title":"Go 1.26","url":"https://go.dev/doc/go1.26","content":"Released in February."}]}`))
	p := New(Config{BaseURL: DefaultBaseURL, SearchKey: cloudKey, SearchURL: srv.URL + "/api/web_search", HTTPClient: srv.Client, Policy: llmtest.Policy(nil)})
	var ws llm.WebSearcher = p
	r, err := ws.WebSearch(context.Background(), "llama3.2", "go 1.26")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sources) != 1 || r.Sources[0].URL != "https://go.dev/doc/go1.26" || !strings.Contains(r.Text, "Released in February.") {
		t.Fatalf("result %+v", r)
	}
	last := srv.Last()
	if last.Path != "/api/web_search" || last.Body["query"] != "go 1.26" || last.Header.Get("Authorization") != "Bearer "+cloudKey {
		t.Fatalf("request %+v", last)
	}
	local := New(Config{BaseURL: srv.URL})
	if _, err := local.WebSearch(context.Background(), "m", "q"); llm.KindOf(err) != llm.ErrMissingKey || !strings.Contains(err.Error(), "OLLAMA_API_KEY") {
		t.Fatalf("no key: %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("searched without a key: %d requests", n)
	}
}

func TestBaseURLForms(t *testing.T) {
	for in, want := range map[string]string{
		"":                           DefaultBaseURL,
		"http://localhost:11434/v1":  "http://localhost:11434",
		"http://gpu-box:11434/api/":  "http://gpu-box:11434",
		"https://ollama.com":         CloudBaseURL,
		"http://proxy.example/olla/": "http://proxy.example/olla",
	} {
		if got := normaliseBase(in); got != want {
			t.Errorf("normaliseBase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestToolAnswerWithoutItsCallIsABadRequest(t *testing.T) {
	_, p := fake(t, lines(done))
	req := userReq("m")
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: "nope", Content: "x"})
	if _, _, err := llmtest.Collect(t, p, req); llm.KindOf(err) != llm.ErrBadRequest {
		t.Fatalf("err %v", err)
	}
}

func TestNoGoroutineLeaks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	srv := llmtest.New(t, show(`{"values":[false,true]}`), lines(content("ok"), done), lines(content("half")),
		llmtest.Hang(release))
	defer srv.Close()
	defer close(release)
	p := New(Config{BaseURL: srv.URL, HTTPClient: srv.Client, Policy: llmtest.Policy(nil), ProbeTimeout: 50 * time.Millisecond})
	req := userReq("m")
	req.Effort = llm.EffortLow
	_, _, _ = llmtest.Collect(t, p, req)
	_, _, _ = llmtest.Collect(t, p, userReq("m"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-time.After(50 * time.Millisecond); cancel() }()
	_, _ = p.Stream(ctx, userReq("m"), func(llm.Delta) {})
}

func TestUnreachableServer(t *testing.T) {
	srv := llmtest.New(t, lines(done))
	url := srv.URL
	srv.Close()
	p := New(Config{BaseURL: url, Policy: llmtest.Policy(nil)})
	if _, _, err := llmtest.Collect(t, p, userReq("m")); llmtest.Kind(t, err) != llm.ErrUnreachable || !strings.Contains(err.Error(), "running") {
		t.Fatalf("err %v", err)
	}
}
