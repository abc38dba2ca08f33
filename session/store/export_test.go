package store

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestExportMarkdown(t *testing.T) {
	s, _ := openTest(t, t.TempDir())
	id := mustCreate(t, s)
	turn := sampleTurn()
	turn[2].Content = "output with a fence:\n```\nnot the end\n```"
	mustAppend(t, s, id, turn...)
	if err := s.recordToolResult(id, "call_1", false); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename(id, "A\ntitle"); err != nil {
		t.Fatal(err)
	}
	md := string(ExportMarkdown(mustLoad(t, s, id)))
	for _, want := range []string{
		"# A title\n",
		"- id: `" + id + "`",
		"- messages: 4",
		"## User\n\nopen example.com and read <h1> & the title\n",
		"<details><summary>Reasoning</summary>\n\n```\nI should navigate first.\n```\n\n</details>",
		"Tool call `BrowserNavigate` (`call_1`):\n\n```json\n{\"url\":\"https://example.com\"}\n```",
		"## Tool result `call_1` (failed)\n\n````\noutput with a fence:\n```\nnot the end\n```\n````\n",
		"## Assistant\n\nThe page is titled \"Example Domain\".\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Count(md, "## ") != 4 {
		t.Errorf("want 4 message headings:\n%s", md)
	}
}

func TestExportJSON(t *testing.T) {
	s := OpenMemory()
	id := mustCreate(t, s)
	empty, err := ExportJSON(mustLoad(t, s, id))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(empty), `"messages": []`) {
		t.Fatalf("empty conversation export: %s", empty)
	}
	mustAppend(t, s, id, sampleTurn()...)
	if err := s.recordToolResult(id, "call_1", true); err != nil {
		t.Fatal(err)
	}
	data, err := ExportJSON(mustLoad(t, s, id))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID           string          `json:"id"`
		Title        string          `json:"title"`
		MessageCount int             `json:"message_count"`
		UpdatedAt    string          `json:"updated_at"`
		Messages     []Message       `json:"messages"`
		ToolResults  map[string]bool `json:"tool_results"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if got.ID != id || got.MessageCount != 4 || got.UpdatedAt == "" || !got.ToolResults["call_1"] {
		t.Fatalf("export %+v", got)
	}
	if mustJSON(t, got.Messages) != mustJSON(t, sampleTurn()) {
		t.Fatalf("exported messages differ:\n%s", data)
	}
}

// recordToolResult notes whether the execution of toolCallID succeeded, on
// its own: what stores written before AppendToolResult existed hold, and
// what a test needs to place an outcome apart from its message.
func (s *Store) recordToolResult(id, toolCallID string, ok bool) error {
	return s.change(id, func(Meta) []record {
		return []record{{Kind: kindToolResult, ToolCallID: toolCallID, OK: &ok}}
	})
}
