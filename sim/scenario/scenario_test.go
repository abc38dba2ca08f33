package scenario

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/internal/infertest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leaks.Options()...)
}

func ctxGuard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func shipped(t *testing.T, name string) *Scenario {
	t.Helper()
	data, err := fs.ReadFile(assets.Scenarios, path.Join("scenarios", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(data, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestShippedScenariosPassAgainstInfer runs every scenario in
// assets/scenarios against an in-process infer of its own.
func TestShippedScenariosPassAgainstInfer(t *testing.T) {
	entries, err := fs.ReadDir(assets.Scenarios, "scenarios")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"approve-from-panel.yaml", "browse-demo.yaml", "clear.yaml", "interrupt.yaml",
		"opentask-session.yaml", "reconnect-mid-command.yaml", "reject-from-panel.yaml"}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("shipped scenarios %v, want %v", got, want)
	}
	for _, name := range got {
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			s := shipped(t, name)
			in := infertest.Start(t, infertest.Options{})
			var progress bytes.Buffer
			if err := s.Run(ctxGuard(t), Options{URL: in.URL, Token: in.Token, Progress: &progress}); err != nil {
				t.Fatalf("%v\nprogress:\n%s", err, progress.String())
			}
			if n := strings.Count(progress.String(), "✓"); n != len(s.Steps) {
				t.Errorf("%d of %d steps reported as passed", n, len(s.Steps))
			}
		})
	}
}

func TestAnUnmetExpectationShowsTheClosestFrames(t *testing.T) {
	s, err := Parse([]byte(`
name: wrong expectation
timeout: 2s
steps:
  - panel: say hello
  - expect: {type: chat_event, event: {type: RUN_FINISHED}, text_contains: "goodbye"}
`), "wrong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := infertest.Start(t, infertest.Options{})
	err = s.Run(ctxGuard(t), Options{URL: in.URL, Token: in.Token})
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v, want a *Failure", err)
	}
	msg := f.Error()
	for _, want := range []string{
		"wrong.yaml: step 2 (line 6", "no matching frame within 2s",
		`expected: {"event":{"type":"RUN_FINISHED"},"type":"chat_event"} after text containing "goodbye"`,
		"closest of the", `"type":"RUN_FINISHED"`, "matches the pattern, but not the text condition",
		"text streamed meanwhile:", "hello",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure message lacks %q:\n%s", want, msg)
		}
	}
}

func TestScriptedAnswersReplaceTheBrowser(t *testing.T) {
	s, err := Parse([]byte(`
browser: none
steps:
  - answer: {action: read, selector: h1, result: {url: "https://scripted.example/", title: Scripted, content: "a scripted heading"}}
  - answer: {action: tabs, result: {tabs: [{index: 0, url: "https://never.example/", title: Never, active: true}]}}
  - panel: say read h1
  - expect: {type: chat_event, event: {type: RUN_FINISHED}, text_contains: "a scripted heading"}
`), "answers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := infertest.Start(t, infertest.Options{})
	err = s.Run(ctxGuard(t), Options{URL: in.URL, Token: in.Token})
	if err == nil || !strings.Contains(err.Error(), "scripted answers were never used: tabs") {
		t.Fatalf("err = %v, want the unused tabs answer reported", err)
	}
}

func TestRefusedPanelCommandsFailTheStepUnlessExpected(t *testing.T) {
	s, err := Parse([]byte(`
profile: opentask-1.12.1
steps:
  - panel: {command: "models", fails: "never sends list_models"}
  - panel: mode plan
`), "refused.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := infertest.Start(t, infertest.Options{})
	err = s.Run(ctxGuard(t), Options{URL: in.URL, Token: in.Token})
	var f *Failure
	if !errors.As(err, &f) || f.Step != 2 || !strings.Contains(f.Reason, "opentask-1.12.1 never sends set_mode") {
		t.Fatalf("err = %v, want step 2 refused by the profile", err)
	}
}

func TestParseRejectsMistakes(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"steps:\n  - pannel: say hi\n", "field pannel not found"},
		{"steps:\n  - panel: say hi\n    wait: 1s\n", "step 1 (line 2) has 2 kinds"},
		{"steps:\n  - expect: {event: {type: RUN_FINISHED}}\n", "expect needs a frame type"},
		{"steps:\n  - expect: {type: chat_event, within: soon}\n", "within"},
		{"steps:\n  - answer: {result: {content: x}}\n", "answer needs the action"},
		{"steps:\n  - answer: {action: read, result: {contents: x}}\n", "not a browser_result"},
		{"steps:\n  - send: {content: x}\n", "send needs a frame with a type"},
		{"steps:\n  - panel: {command: hi, fail: x}\n", `panel has no field "fail"`},
		{"profile: opentask-9\nsteps:\n  - wait: 1ms\n", "unknown profile"},
		{"browser: chrome\nsteps:\n  - wait: 1ms\n", "browser \"chrome\""},
		{"name: nothing\n", "no steps"},
		{"", "empty"},
		{"steps: [", "not valid YAML"},
	} {
		_, err := Parse([]byte(tc.doc), "bad.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func TestSubsetMatching(t *testing.T) {
	frame := map[string]any{"type": "conversations", "conversations": []any{
		map[string]any{"title": "B", "message_count": 2.0},
		map[string]any{"title": "A", "message_count": 4.0},
	}}
	for _, tc := range []struct {
		pattern map[string]any
		want    string
	}{
		{map[string]any{"type": "conversations"}, ""},
		{map[string]any{"conversations": []any{map[string]any{"title": "A"}}}, ""},
		{map[string]any{"conversations": []any{map[string]any{"title": "B"}, map[string]any{"title": "A"}}}, ""},
		{map[string]any{"conversations": []any{map[string]any{"title": "A"}, map[string]any{"title": "B"}}}, "conversations[1]"},
		{map[string]any{"conversations": []any{}}, "has 2 elements, want none"},
		{map[string]any{"type": "skills"}, `type is "conversations", want "skills"`},
		{map[string]any{"missing": "x"}, "missing is missing"},
	} {
		if got := mismatch(tc.pattern, frame, ""); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%v: mismatch %q, want %q", tc.pattern, got, tc.want)
		}
	}
}
