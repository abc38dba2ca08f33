package session

import (
	"testing"

	"github.com/infer-workspace/infer/session/tools"
)

// TestOutsideLinesNameWhatTheyActOn: an outside call's line names what
// each browser tool acts on, as the tool shows it, never the text it
// types; other tools' arguments are quoted whole.
func TestOutsideLinesNameWhatTheyActOn(t *testing.T) {
	for _, tc := range []struct{ name, args, line string }{
		{"BrowserNavigate", "{\"url\":\"https://example.com/\"}", "MCP client · BrowserNavigate https://example.com/"},
		{"BrowserClick", "{\"selector\":\"button[type=submit]\"}", "MCP client · BrowserClick button[type=submit]"},
		{"BrowserType", "{\"selector\":\"#q\",\"text\":\"hello world\",\"press_enter\":true}", "MCP client · BrowserType text into #q ⏎"},
		{"BrowserType", "{\"selector\":\"#q\",\"text\":\"hello world\"}", "MCP client · BrowserType text into #q"},
		{"BrowserRead", "{}", "MCP client · BrowserRead whole page"},
		{"BrowserRead", "{\"selector\":\"main\"}", "MCP client · BrowserRead main"},
		{"BrowserScreenshot", "{}", "MCP client · BrowserScreenshot"},
		{"BrowserTabs", "{}", "MCP client · BrowserTabs"},
		{"Bash", "{\"command\":\"ls\"}", "MCP client · Bash {\"command\":\"ls\"}"},
		{"BrowserClick", "not json", "MCP client · BrowserClick not json"},
	} {
		c := OutsideCall{Origin: tools.OriginMCP, Name: tc.name, Args: tc.args}
		if got := c.Line(); got != tc.line {
			t.Errorf("%s %s: %q, want %q", tc.name, tc.args, got, tc.line)
		}
	}
}
