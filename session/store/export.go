package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ExportMarkdown renders c for a person to read or share: a heading per
// message, tool calls and tool output in fenced blocks.
func ExportMarkdown(c Conversation) []byte {
	var b strings.Builder
	title := c.Meta.Title
	if title == "" {
		title = "Untitled conversation"
	}
	fmt.Fprintf(&b, "# %s\n\n", oneLine(title))
	fmt.Fprintf(&b, "- id: `%s`\n- created: %s\n- updated: %s\n- messages: %d\n",
		c.Meta.ID, c.Meta.CreatedAt.UTC().Format(time.RFC3339), c.Meta.UpdatedAt.UTC().Format(time.RFC3339), c.Meta.MessageCount)
	for _, m := range c.Messages {
		switch m.Role {
		case RoleUser:
			b.WriteString("\n## User\n\n")
		case RoleAssistant:
			b.WriteString("\n## Assistant\n\n")
		case RoleSystem:
			b.WriteString("\n## System\n\n")
		case RoleTool:
			fmt.Fprintf(&b, "\n## Tool result `%s`", m.ToolCallID)
			if ok, known := c.ToolResults[m.ToolCallID]; known {
				if ok {
					b.WriteString(" (succeeded)")
				} else {
					b.WriteString(" (failed)")
				}
			}
			b.WriteString("\n\n")
			fence(&b, "", m.Content)
			continue
		default:
			fmt.Fprintf(&b, "\n## %s\n\n", oneLine(m.Role))
		}
		if m.Reasoning != "" {
			b.WriteString("<details><summary>Reasoning</summary>\n\n")
			fence(&b, "", m.Reasoning)
			b.WriteString("</details>\n\n")
		}
		if m.Content != "" {
			b.WriteString(strings.TrimRight(m.Content, "\n"))
			b.WriteString("\n\n")
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "Tool call `%s` (`%s`):\n\n", oneLine(tc.Function.Name), tc.ID)
			fence(&b, "json", tc.Function.Arguments)
		}
	}
	return []byte(strings.TrimRight(b.String(), "\n") + "\n")
}

// fence writes text in a code fence longer than any run of backticks inside
// it, so tool output cannot close the block early.
func fence(b *strings.Builder, lang, text string) {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	fmt.Fprintf(b, "%s%s\n%s\n%s\n\n", f, lang, strings.TrimRight(text, "\n"), f)
}

// oneLine keeps headings on one line whatever a title contains.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// exported is the JSON export's shape: the summary fields, then the
// messages in the same OpenAI-style shape the panel reads.
type exported struct {
	Meta
	Messages    []Message       `json:"messages"`
	ToolResults map[string]bool `json:"tool_results,omitempty"`
}

// ExportJSON renders c as one indented JSON document.
func ExportJSON(c Conversation) ([]byte, error) {
	msgs := c.Messages
	if msgs == nil {
		msgs = []Message{}
	}
	data, err := json.MarshalIndent(exported{Meta: c.Meta, Messages: msgs, ToolResults: c.ToolResults}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("exporting conversation %s: %w", c.Meta.ID, err)
	}
	return append(data, '\n'), nil
}
