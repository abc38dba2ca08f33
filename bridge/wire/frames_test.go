package wire

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// everyFrame holds one frame of every known type, with each field set,
// and the exact bytes it goes out as. The bytes were taken from the
// encoder before frame types moved to a registry; the real extension reads
// them, so they must not change.
var everyFrame = []struct {
	f    Frame
	want string
}{
	{BrowserHello{Token: "t", ExtensionVersion: "1.12.1"}, `{"type":"browser_hello","token":"t","extension_version":"1.12.1"}`},
	{BrowserHelloAck{}, `{"type":"browser_hello_ack"}`},
	{BrowserCommand{ID: "c", Action: "type", URL: "u", Selector: "#q", Text: "x", PressEnter: true, TimeoutMS: 5}, `{"type":"browser_command","id":"c","action":"type","url":"u","selector":"#q","text":"x","press_enter":true,"timeout_ms":5}`},
	{BrowserResult{ID: "r", URL: "u", Title: "t", Events: []json.RawMessage{[]byte(`{"a":1}`)}, Image: "QQ==", ImageMIMEType: "image/png", Tabs: []Tab{{Index: 1, URL: "u", Title: "t", Active: true, Controlled: true}}}, `{"type":"browser_result","id":"r","url":"u","title":"t","content":null,"events":[{"a":1}],"error":"","image":"QQ==","image_mime_type":"image/png","tabs":[{"index":1,"url":"u","title":"t","active":true,"controlled":true}]}`},
	{ListConversations{}, `{"type":"list_conversations"}`},
	{Conversations{Conversations: []ConversationInfo{{ID: "c", Title: "T", UpdatedAt: "2026", MessageCount: 2}}}, `{"type":"conversations","conversations":[{"id":"c","title":"T","updated_at":"2026","message_count":2}]}`},
	{ResumeConversation{ID: "c"}, `{"type":"resume_conversation","id":"c"}`},
	{ConversationSnapshot{Messages: []Message{{Role: "assistant", Content: "hi", ToolCalls: []ToolCall{{ID: "1", Type: "function", Function: FunctionCall{Name: "Bash", Arguments: "{}"}}}, ToolCallID: "0", Reasoning: "r"}}, ToolResults: map[string]bool{"1": true}}, `{"type":"conversation_snapshot","messages":[{"role":"assistant","content":"hi","tool_calls":[{"id":"1","type":"function","function":{"name":"Bash","arguments":"{}"}}],"tool_call_id":"0","reasoning":"r"}],"tool_results":{"1":true}}`},
	{NewSession{}, `{"type":"new_session"}`},
	{ChatEvent{Event: json.RawMessage(`{"type":"RUN_STARTED"}`)}, `{"type":"chat_event","event":{"type":"RUN_STARTED"}}`},
	{UserMessage{Content: "hello <b>"}, `{"type":"user_message","content":"hello \u003cb\u003e"}`},
	{Interrupt{}, `{"type":"interrupt"}`},
	{Interrupted{}, `{"type":"interrupted"}`},
	{ListHistory{}, `{"type":"list_history"}`},
	{History{History: []string{"a"}}, `{"type":"history","history":["a"]}`},
	{ListSkills{}, `{"type":"list_skills"}`},
	{Skills{Skills: []Skill{{Name: "n", Description: "d", Scope: "user"}}}, `{"type":"skills","skills":[{"name":"n","description":"d","scope":"user"}]}`},
	{ListModels{}, `{"type":"list_models"}`},
	{Models{Models: []string{"a/b"}, Current: "a/b"}, `{"type":"models","models":["a/b"],"current":"a/b"}`},
	{SelectModel{Model: "a/b"}, `{"type":"select_model","model":"a/b"}`},
	{Mode{Mode: "plan"}, `{"type":"mode","mode":"plan"}`},
	{SetMode{Mode: "plan"}, `{"type":"set_mode","mode":"plan"}`},
	{ApprovalRequest{RequestID: "q", ToolName: "Bash", ToolArgs: "{}"}, `{"type":"approval_request","request_id":"q","tool_name":"Bash","tool_args":"{}"}`},
	{ApprovalResponse{RequestID: "q", Action: "approve"}, `{"type":"approval_response","request_id":"q","action":"approve"}`},
	{ApprovalResolved{RequestID: "q"}, `{"type":"approval_resolved","request_id":"q"}`},
	{ToolRequest{ID: "t", ToolName: "Read", ToolArgs: "{}"}, `{"type":"tool_request","id":"t","tool_name":"Read","tool_args":"{}"}`},
	{ToolResult{ID: "t", Success: true, Output: "o", Error: "e"}, `{"type":"tool_result","id":"t","success":true,"output":"o","error":"e"}`},
	{Keepalive{}, `{"type":"infer_keepalive"}`},
}

func TestEveryFrameTypeEncodesToTheSameBytesAndBack(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range everyFrame {
		typ := tc.f.FrameType()
		seen[typ] = true
		got, err := Encode(tc.f)
		if err != nil || string(got) != tc.want {
			t.Errorf("Encode(%T) = %s, %v\n want %s", tc.f, got, err, tc.want)
			continue
		}
		back, err := Decode(got)
		if err != nil || !reflect.DeepEqual(back, tc.f) {
			t.Errorf("Decode(%s) = %#v, %v; want %#v", got, back, err, tc.f)
		}
	}
	for typ := range kinds {
		if !seen[typ] {
			t.Errorf("frame type %q has no case in everyFrame", typ)
		}
	}
}

// TestEveryFrameTypeIsRegistered reads the package's source for types with
// a FrameType method: one the registry lacks would decode as Unknown and
// be silently ignored.
func TestEveryFrameTypeIsRegistered(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "FrameType" || fn.Recv == nil {
				continue
			}
			if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok && id.Name != "Unknown" {
				declared = append(declared, id.Name)
			}
		}
	}
	var registered []string
	for _, k := range kinds {
		registered = append(registered, reflect.TypeOf(k.new()).Elem().Name())
	}
	slices.Sort(declared)
	slices.Sort(registered)
	if !slices.Equal(declared, registered) {
		t.Errorf("frame types with a FrameType method:\n %v\nregistered:\n %v", declared, registered)
	}
}

func TestSentByFollowsTheContract(t *testing.T) {
	for _, tc := range []struct {
		f    Frame
		want Side
	}{
		{BrowserHello{}, Extension}, {BrowserResult{}, Extension}, {UserMessage{}, Extension}, {ToolRequest{}, Extension},
		{BrowserCommand{}, Infer}, {ChatEvent{}, Infer}, {ToolResult{}, Infer}, {Keepalive{}, Infer},
		{Unknown{Type: "future"}, 0},
	} {
		if got := SentBy(tc.f); got != tc.want {
			t.Errorf("SentBy(%T) = %d, want %d", tc.f, got, tc.want)
		}
	}
}

func TestNonNullSendsEmptyListsAsArrays(t *testing.T) {
	for _, tc := range []struct {
		f    Frame
		want string
	}{
		{Conversations{}, `{"type":"conversations","conversations":[]}`},
		{ConversationSnapshot{}, `{"type":"conversation_snapshot","messages":[]}`},
		{History{}, `{"type":"history","history":[]}`},
		{Skills{}, `{"type":"skills","skills":[]}`},
		{Models{Current: "m"}, `{"type":"models","models":[],"current":"m"}`},
		{Mode{Mode: "plan"}, `{"type":"mode","mode":"plan"}`},
	} {
		if got := MustEncode(NonNull(tc.f)); string(got) != tc.want {
			t.Errorf("%T: %s, want %s", tc.f, got, tc.want)
		}
	}
}
