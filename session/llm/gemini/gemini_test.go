package gemini

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

const testKey = "AIza-test-0123456789abcdef"

// fake starts a server in Gemini's wire format and a provider pointed at
// it (HTTPOptions.BaseURL) whose retries record waits instead of sleeping.
func fake(t *testing.T, replies ...llmtest.Reply) (*llmtest.Server, *Provider) {
	t.Helper()
	srv := llmtest.New(t, replies...)
	p := New(Config{Name: "gemini", BaseURL: srv.URL, APIKey: testKey, KeyHint: "GEMINI_API_KEY",
		HTTPClient: srv.Client, Policy: llmtest.Policy(nil)})
	return srv, p
}

// sse answers with streamGenerateContent chunks.
func sse(chunks ...string) llmtest.Reply {
	var evs []llmtest.Event
	for _, c := range chunks {
		evs = append(evs, llmtest.Event{Data: c})
	}
	return llmtest.SSE(evs...)
}

// recorded replays a stream file from testdata/streams as it was recorded.
func recorded(t *testing.T, name string) llmtest.Reply {
	return llmtest.Stream(t, name, "text/event-stream")
}

func text(s string) string {
	return `{"candidates":[{"content":{"role":"model","parts":[{"text":` + quote(s) + `}]},"index":0}]}`
}

func stop(s string) string {
	return `{"candidates":[{"content":{"role":"model","parts":[{"text":` + quote(s) + `}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":3,"thoughtsTokenCount":2}}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func userReq(model string) llm.Request {
	return llm.Request{Model: model, System: "be brief", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
}

func TestStreamsTextThoughtsAndUsage(t *testing.T) {
	srv, p := fake(t, sse(
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"pondering","thought":true}]},"index":0}]}`,
		text("Hel"), stop("lo")))
	ds, c, err := llmtest.Collect(t, p, userReq("gemini-3.8-flash"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != "Hello" || c.Reasoning != "pondering" || c.FinishReason != "stop" {
		t.Fatalf("completion %+v", c)
	}
	if llmtest.Joined(ds, llm.TextDelta) != "Hello" || llmtest.Joined(ds, llm.ReasoningDelta) != "pondering" {
		t.Fatalf("deltas %+v", ds)
	}
	if c.Usage != (llm.Usage{InputTokens: 7, OutputTokens: 5, ReasoningTokens: 2}) {
		t.Fatalf("usage %+v", c.Usage)
	}
	r := srv.Last()
	if r.Path != "/v1beta/models/gemini-3.8-flash:streamGenerateContent" || r.Query != "alt=sse" {
		t.Fatalf("sent to %s?%s", r.Path, r.Query)
	}
	if r.Header.Get("x-goog-api-key") != testKey || r.Header.Get("Authorization") != "" {
		t.Fatalf("key headers %v", r.Header)
	}
	if llmtest.At(r.Body, "systemInstruction", "parts", 0, "text") != "be brief" {
		t.Fatalf("system instruction %v", r.Body["systemInstruction"])
	}
	if llmtest.At(r.Body, "generationConfig", "thinkingConfig") != nil {
		t.Fatalf("auto effort sent a thinking config: %v", r.Body["generationConfig"])
	}
}

// A tool loop keeps the model's parts, signature included, through the
// store's JSON (a resumed conversation) and sends them back unchanged.
func TestToolLoopReplaysSignaturesThroughTheStore(t *testing.T) {
	srv, p := fake(t, recorded(t, "tool_call.sse"), recorded(t, "answer.sse"))
	req := userReq(DefaultModel)
	req.Tools = []llm.Tool{{Name: "BrowserRead", Description: "read", Parameters: json.RawMessage(`{"type":"object","properties":{"selector":{"type":"string"}}}`)}}
	ds, c, err := llmtest.Collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ToolCalls) != 1 || c.ToolCalls[0].Name != "BrowserRead" || c.ToolCalls[0].Arguments != `{"selector":"title"}` || c.FinishReason != "tool_calls" {
		t.Fatalf("calls %+v finish %q", c.ToolCalls, c.FinishReason)
	}
	if d := ds[len(ds)-1]; d.Kind != llm.ToolCallDelta || d.ToolCall.ID != c.ToolCalls[0].ID || d.ToolCall.Name != "BrowserRead" {
		t.Fatalf("tool delta %+v", d)
	}
	// Store the turn on disk, reopen the store and load it, as resuming a
	// conversation does.
	req.Messages = llmtest.ThroughStore(t, "hi", c, "Example Domain")
	_, c2, err := llmtest.Collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if c2.Text != `The page is titled "Example Domain".` {
		t.Fatalf("answer %q", c2.Text)
	}
	body := srv.Last().Body
	model := llmtest.At(body, "contents", 1)
	want := `{"parts":[{"text":"The person wants the page title, so I will read the page first.","thought":true},` +
		`{"functionCall":{"args":{"selector":"title"},"name":"BrowserRead"},"thoughtSignature":"Q2lRQjBlMlJZc2lnbmF0dXJlLW9uZQ=="}],"role":"model"}`
	if got, _ := json.Marshal(model); string(got) != want {
		t.Fatalf("model turn replayed as\n%s\nwant\n%s", got, want)
	}
	resp := llmtest.At(body, "contents", 2, "parts", 0, "functionResponse")
	if got, _ := json.Marshal(resp); string(got) != `{"name":"BrowserRead","response":{"output":"Example Domain"}}` {
		t.Fatalf("function response %s (a call without an id is answered without one)", got)
	}
}

// A call the model gave an id is answered with that id.
func TestFunctionResponseKeepsTheModelsCallID(t *testing.T) {
	srv, p := fake(t, sse(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"fc-7","name":"Bash","args":{"command":"ls"}},"thoughtSignature":"c2ln"}]},"finishReason":"STOP","index":0}]}`), sse(stop("done")))
	req := userReq("gemini-3-pro-preview")
	_, c, err := llmtest.Collect(t, p, req)
	if err != nil || len(c.ToolCalls) != 1 || c.ToolCalls[0].ID != "fc-7" {
		t.Fatalf("calls %+v err %v", c.ToolCalls, err)
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: c.ToolCalls, ProviderData: c.ProviderData},
		llm.Message{Role: llm.RoleTool, ToolCallID: "fc-7", Content: "a\nb"})
	if _, _, err := llmtest.Collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	if id := llmtest.At(srv.Last().Body, "contents", 2, "parts", 0, "functionResponse", "id"); id != "fc-7" {
		t.Fatalf("response id %v", id)
	}
}

// An older conversation whose current tool turn has no signatures fails
// before anything is sent, saying what to do; earlier turns do not matter.
func TestLostSignaturesFailWithAnActionableError(t *testing.T) {
	srv, p := fake(t, sse(stop("ok")))
	call := llm.ToolCall{ID: "call_1", Name: "Bash", Arguments: `{"command":"ls"}`}
	req := userReq("gemini-3.8-flash")
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Content: "x"})
	_, _, err := llmtest.Collect(t, p, req)
	if llmtest.Kind(t, err) != llm.ErrBadRequest || !strings.Contains(err.Error(), "thought signatures") || !strings.Contains(err.Error(), "new conversation") {
		t.Fatalf("err %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests sent for a turn Gemini would refuse", n)
	}
	// Once the person answers, that turn is history and is sent rebuilt.
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: "done"}, llm.Message{Role: llm.RoleUser, Content: "next"})
	if _, _, err := llmtest.Collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	if name := llmtest.At(srv.Last().Body, "contents", 1, "parts", 0, "functionCall", "name"); name != "Bash" {
		t.Fatalf("rebuilt call %v", llmtest.At(srv.Last().Body, "contents", 1))
	}
	// Gemini 2.5 does not require signatures: sent as is.
	req.Messages = req.Messages[:3]
	req.Model = "gemini-2.5-flash"
	if _, _, err := llmtest.Collect(t, p, req); err != nil {
		t.Fatalf("2.5 without signatures: %v", err)
	}
}

// If Gemini refuses a turn for its signatures anyway, the error says what
// to do and the request is not repeated.
func TestSignatureRefusalIsExplainedNotRetried(t *testing.T) {
	srv, p := fake(t, llmtest.Status(400, `{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts.","status":"INVALID_ARGUMENT"}}`))
	_, _, err := llmtest.Collect(t, p, userReq("gemini-3.8-flash"))
	if llmtest.Kind(t, err) != llm.ErrBadRequest || !strings.Contains(err.Error(), "new conversation") {
		t.Fatalf("err %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

func TestThinkingLevelsPerModel(t *testing.T) {
	rows := []struct {
		model  string
		effort llm.Effort
		want   string // thinkingConfig JSON, "" for none sent
	}{
		{"gemini-3.8-flash", llm.EffortAuto, ""},
		{"gemini-3.8-flash", llm.EffortNone, `{"thinkingLevel":"MINIMAL"}`},
		{"gemini-3.8-flash", llm.EffortLow, `{"includeThoughts":true,"thinkingLevel":"LOW"}`},
		{"gemini-3.8-flash", llm.EffortMedium, `{"includeThoughts":true,"thinkingLevel":"MEDIUM"}`},
		{"gemini-3.8-flash", llm.EffortHigh, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"gemini-3-flash-preview", llm.EffortNone, `{"thinkingLevel":"MINIMAL"}`},
		{"gemini-3.5-flash-lite", llm.EffortMedium, `{"includeThoughts":true,"thinkingLevel":"MEDIUM"}`},
		{"gemini-flash-latest", llm.EffortNone, `{"thinkingLevel":"MINIMAL"}`},
		{"gemini-3-pro-preview", llm.EffortNone, `{"thinkingLevel":"LOW"}`},
		{"gemini-3-pro-preview", llm.EffortMedium, `{"includeThoughts":true,"thinkingLevel":"LOW"}`},
		{"gemini-3-pro-preview", llm.EffortHigh, `{"includeThoughts":true,"thinkingLevel":"HIGH"}`},
		{"gemini-3.1-pro-preview", llm.EffortNone, `{"thinkingLevel":"LOW"}`},
		{"gemini-3.1-pro-preview", llm.EffortMedium, `{"includeThoughts":true,"thinkingLevel":"MEDIUM"}`},
		{"gemini-2.5-pro", llm.EffortNone, `{"thinkingBudget":128}`},
		{"gemini-2.5-pro", llm.EffortHigh, `{"includeThoughts":true,"thinkingBudget":32768}`},
		{"gemini-2.5-flash", llm.EffortNone, `{"thinkingBudget":0}`},
		{"gemini-2.5-flash", llm.EffortLow, `{"includeThoughts":true,"thinkingBudget":1024}`},
		{"gemini-2.5-flash-lite", llm.EffortMedium, `{"includeThoughts":true,"thinkingBudget":8192}`},
		{"gemini-2.5-flash", llm.EffortHigh, `{"includeThoughts":true,"thinkingBudget":24576}`},
		{"gemini-2.0-flash", llm.EffortHigh, ""},
		{"gemma-3-27b-it", llm.EffortNone, ""},
	}
	for _, r := range rows {
		got := ""
		if tc := ThinkingFor(r.model, r.effort); tc != nil {
			raw, _ := json.Marshal(tc)
			got = string(raw)
		}
		if got != r.want {
			t.Errorf("ThinkingFor(%s, %s) = %s, want %s", r.model, r.effort, got, r.want)
		}
	}
}

func TestEffortAndTemperatureOnTheWire(t *testing.T) {
	srv, p := fake(t, sse(stop("ok")))
	req := userReq("gemini-3.8-flash")
	req.Effort = llm.EffortNone
	temp := 0.3
	req.Temperature = &temp
	if _, _, err := llmtest.Collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	gc := llmtest.At(srv.Last().Body, "generationConfig")
	if got, _ := json.Marshal(gc); string(got) != `{"temperature":0.3,"thinkingConfig":{"thinkingLevel":"MINIMAL"}}` {
		t.Fatalf("generationConfig %s", got)
	}
	bad := 2.5
	req.Temperature = &bad
	if _, _, err := llmtest.Collect(t, p, req); llmtest.Kind(t, err) != llm.ErrBadRequest {
		t.Fatalf("out-of-range temperature: %v", err)
	}
}

// A rejected level that lists the supported ones is retried with the
// nearest; a rejected temperature is retried without it.
func TestRejectedOptionsAreRetriedOnce(t *testing.T) {
	srv, p := fake(t,
		llmtest.Status(400, `{"error":{"code":400,"message":"Thinking level MINIMAL is not supported for this model. Supported values are 'low' and 'high'.","status":"INVALID_ARGUMENT"}}`),
		llmtest.Status(400, `{"error":{"code":400,"message":"temperature is not supported for this model","status":"INVALID_ARGUMENT"}}`),
		sse(stop("ok")))
	req := userReq("gemini-3.8-flash")
	req.Effort = llm.EffortNone
	temp := 1.5
	req.Temperature = &temp
	if _, _, err := llmtest.Collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	rs := srv.Requests()
	if len(rs) != 3 {
		t.Fatalf("%d requests", len(rs))
	}
	if l := llmtest.At(rs[1].Body, "generationConfig", "thinkingConfig", "thinkingLevel"); l != "LOW" {
		t.Fatalf("second request level %v", l)
	}
	if tv := llmtest.At(rs[2].Body, "generationConfig", "temperature"); tv != nil {
		t.Fatalf("third request still has temperature %v", tv)
	}
}

func TestErrorsMapToTheSharedClasses(t *testing.T) {
	rows := []struct {
		reply llmtest.Reply
		kind  llm.ErrorKind
		says  string
	}{
		{llmtest.Status(400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`), llm.ErrBadRequest, "API key not valid"},
		{llmtest.Status(403, `{"error":{"code":403,"message":"Permission denied","status":"PERMISSION_DENIED"}}`), llm.ErrAuth, "GEMINI_API_KEY"},
		{llmtest.Status(404, `{"error":{"code":404,"message":"models/gemini-9 is not found","status":"NOT_FOUND"}}`), llm.ErrNotFound, "not found"},
		{llmtest.Status(429, `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`), llm.ErrRateLimited, "429"},
		{llmtest.Status(503, `{"error":{"code":503,"message":"The model is overloaded","status":"UNAVAILABLE"}}`), llm.ErrServer, "overloaded"},
	}
	for _, r := range rows {
		_, p := fake(t, r.reply)
		_, _, err := llmtest.Collect(t, p, userReq("gemini-9"))
		if llmtest.Kind(t, err) != r.kind || !strings.Contains(err.Error(), r.says) || strings.Contains(err.Error(), testKey) {
			t.Errorf("kind %v err %v; want kind %v saying %q", llm.KindOf(err), err, r.kind, r.says)
		}
	}
}

func TestOverloadIsRetriedAndAnErrorEventBeforeAnyText(t *testing.T) {
	srv, p := fake(t,
		llmtest.Status(503, `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`),
		sse(`{"error":{"code":500,"message":"internal","status":"INTERNAL"}}`),
		sse(stop("fine")))
	_, c, err := llmtest.Collect(t, p, userReq("gemini-3.8-flash"))
	if err != nil || c.Text != "fine" || len(srv.Requests()) != 3 {
		t.Fatalf("text %q err %v after %d requests", c.Text, err, len(srv.Requests()))
	}
}

func TestBrokenStreamKeepsThePartialAnswer(t *testing.T) {
	for name, reply := range map[string]llmtest.Reply{
		"cut":          llmtest.Broken(llmtest.Event{Data: text("half an ")}),
		"no finish":    sse(text("half an ")),
		"error after":  sse(text("half an "), `{"error":{"code":500,"message":"internal","status":"INTERNAL"}}`),
		"not the wire": sse(text("half an "), `{not json`),
	} {
		srv, p := fake(t, reply)
		_, c, err := llmtest.Collect(t, p, userReq("gemini-3.8-flash"))
		if llmtest.Kind(t, err) != llm.ErrStream || c.Text != "half an " {
			t.Errorf("%s: kind %v text %q err %v", name, llm.KindOf(err), c.Text, err)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%s: a stream that showed text was repeated (%d requests)", name, n)
		}
	}
}

func TestBlockedAnswerSaysSo(t *testing.T) {
	_, p := fake(t, sse(`{"candidates":[{"finishReason":"SAFETY","index":0}]}`))
	_, _, err := llmtest.Collect(t, p, userReq("gemini-3.8-flash"))
	if llmtest.Kind(t, err) != llm.ErrBadRequest || !strings.Contains(err.Error(), "SAFETY") {
		t.Fatalf("err %v", err)
	}
}

func TestIdleStreamGivesUp(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := llmtest.New(t, llmtest.Hang(release, llmtest.Event{Data: text("start ")}))
	p := New(Config{BaseURL: srv.URL, APIKey: testKey, HTTPClient: srv.Client, Policy: llmtest.Policy(nil), IdleTimeout: 200 * time.Millisecond})
	_, c, err := llmtest.Collect(t, p, userReq("gemini-3.8-flash"))
	if llmtest.Kind(t, err) != llm.ErrStream || !strings.Contains(err.Error(), "stream_idle_timeout") || c.Text != "start " {
		t.Fatalf("kind %v text %q err %v", llm.KindOf(err), c.Text, err)
	}
}

func TestCancelReturnsPromptly(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	_, p := fake(t, llmtest.Hang(release, llmtest.Event{Data: text("start ")}))
	ctx, cancel := context.WithCancel(context.Background())
	var got []llm.Delta
	_, err := p.Stream(ctx, userReq("gemini-3.8-flash"), func(d llm.Delta) { got = append(got, d); cancel() })
	if err == nil || ctx.Err() == nil || len(got) != 1 {
		t.Fatalf("err %v deltas %d", err, len(got))
	}
}

func TestMissingKeyAndModel(t *testing.T) {
	p := New(Config{KeyHint: "GEMINI_API_KEY or providers.gemini.api_key_env"})
	if _, err := p.Stream(context.Background(), userReq("gemini-3.8-flash"), func(llm.Delta) {}); llm.KindOf(err) != llm.ErrMissingKey || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Fatalf("err %v", err)
	}
	_, p = fake(t, sse(stop("x")))
	if _, err := p.Stream(context.Background(), userReq(" "), func(llm.Delta) {}); llm.KindOf(err) != llm.ErrBadRequest || !strings.Contains(err.Error(), DefaultModel) {
		t.Fatalf("err %v", err)
	}
}

func TestImagesAndToolImagesGoInline(t *testing.T) {
	srv, p := fake(t, sse(stop("x")))
	req := userReq("gemini-3.8-flash")
	req.Messages[0].Images = []llm.Image{{MIME: "image/jpeg", Data: []byte{1, 2, 3}}}
	if _, _, err := llmtest.Collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	if got := llmtest.At(srv.Last().Body, "contents", 0, "parts", 1, "inlineData"); got == nil || llmtest.At(got, "mimeType") != "image/jpeg" || llmtest.At(got, "data") != "AQID" {
		t.Fatalf("image part %v", got)
	}
}

func TestListModelsKeepsGeneratingModelsDefaultFirst(t *testing.T) {
	srv, p := fake(t, llmtest.JSON(`{"models":[
		{"name":"models/gemini-2.5-flash","supportedGenerationMethods":["generateContent","countTokens"]},
		{"name":"models/text-embedding-004","supportedGenerationMethods":["embedContent"]},
		{"name":"models/gemini-3.8-flash-tts","supportedGenerationMethods":["generateContent"]},
		{"name":"models/gemini-3.8-flash","supportedGenerationMethods":["generateContent"]}]}`))
	ids, err := p.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, ",") != "gemini-3.8-flash,gemini-2.5-flash" {
		t.Fatalf("ids %v", ids)
	}
	if r := srv.Last(); r.Path != "/v1beta/models" || r.Header.Get("x-goog-api-key") != testKey {
		t.Fatalf("listed from %s", r.Path)
	}
	_, p = fake(t, llmtest.Status(401, `{"error":{"code":401,"message":"bad key","status":"UNAUTHENTICATED"}}`))
	if _, err := p.ListModels(context.Background()); llm.KindOf(err) != llm.ErrAuth {
		t.Fatalf("err %v", err)
	}
}

func TestWebSearchUsesGoogleSearchGrounding(t *testing.T) {
	srv, p := fake(t, llmtest.JSON(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Go 1.26 was released in February."}]},"finishReason":"STOP",
		"groundingMetadata":{"webSearchQueries":["go 1.26 release"],"groundingChunks":[{"web":{"uri":"https://go.dev/doc/go1.26","title":"go.dev"}},{"web":{"uri":"https://go.dev/doc/go1.26","title":"go.dev"}}]}}]}`))
	var ws llm.WebSearcher = p
	r, err := ws.WebSearch(context.Background(), "", "go 1.26 release date")
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "Go 1.26 was released in February." || len(r.Sources) != 1 || r.Sources[0].URL != "https://go.dev/doc/go1.26" {
		t.Fatalf("result %+v", r)
	}
	last := srv.Last()
	if last.Path != "/v1beta/models/"+DefaultModel+":generateContent" || llmtest.At(last.Body, "tools", 0, "googleSearch") == nil {
		t.Fatalf("search request %s %v", last.Path, last.Body)
	}
	if _, err := ws.WebSearch(context.Background(), "", "  "); llm.KindOf(err) != llm.ErrBadRequest {
		t.Fatalf("empty query: %v", err)
	}
}

func TestBaseURLForms(t *testing.T) {
	for in, want := range map[string][2]string{
		"": {DefaultBaseURL, "v1beta"},
		"https://generativelanguage.googleapis.com/v1beta/openai/": {DefaultBaseURL, "v1beta"},
		"http://127.0.0.1:9/v1":        {"http://127.0.0.1:9/", "v1"},
		"http://proxy.example/gemini/": {"http://proxy.example/gemini/", "v1beta"},
	} {
		if b, v := splitBaseURL(in); b != want[0] || v != want[1] {
			t.Errorf("splitBaseURL(%q) = %q, %q; want %q", in, b, v, want)
		}
	}
}

func TestNoGoroutineLeaks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	srv := llmtest.New(t, sse(stop("ok")), llmtest.Broken(llmtest.Event{Data: text("half")}), llmtest.Hang(release, llmtest.Event{Data: text("x")}))
	defer srv.Close()
	defer close(release)
	p := New(Config{BaseURL: srv.URL, APIKey: testKey, HTTPClient: srv.Client, Policy: llmtest.Policy(nil)})
	_, _, _ = llmtest.Collect(t, p, userReq("gemini-3.8-flash"))
	_, _, _ = llmtest.Collect(t, p, userReq("gemini-3.8-flash"))
	ctx, cancel := context.WithCancel(context.Background())
	_, _ = p.Stream(ctx, userReq("gemini-3.8-flash"), func(llm.Delta) { cancel() })
}

func TestUnreachableServer(t *testing.T) {
	srv := llmtest.New(t, sse(stop("x")))
	url := srv.URL
	srv.Close()
	p := New(Config{BaseURL: url, APIKey: testKey, Policy: llmtest.Policy(nil)})
	if _, _, err := llmtest.Collect(t, p, userReq("gemini-3.8-flash")); llmtest.Kind(t, err) != llm.ErrUnreachable || strings.Contains(err.Error(), testKey) {
		t.Fatalf("err %v", err)
	}
}
