package browserpane

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/infer-workspace/infer/session/browser"
)

// The workspace reports tabs and screenshots only as the text of the
// BrowserTabs and BrowserScreenshot tool results, so the pane reads them
// back from that text. The formats are the session tools' own:
//
//	3 open tabs:
//	0. Example Domain — https://example.com/ [controlled, focused]
//
//	Screenshot of Example (https://…) saved to /abs/path.png (800×600 PNG, …).

var tabLine = regexp.MustCompile(`^(\d+)\. (.*) — (\S*)(?: \[([^\]]*)\])?$`)

// ParseTabs reads the tabs out of a BrowserTabs result. ok is false when
// the text is not a tab list (a failure message, say).
func ParseTabs(text string) (tabs []browser.Tab, ok bool) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) == 1 && strings.HasPrefix(lines[0], "No tabs are open") {
		return nil, true
	}
	for _, l := range lines {
		m := tabLine.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		idx, _ := strconv.Atoi(m[1])
		t := browser.Tab{Index: idx, Title: m[2], URL: m[3]}
		for _, mark := range strings.Split(m[4], ",") {
			switch strings.TrimSpace(mark) {
			case "controlled":
				t.Controlled = true
			case "focused", "active":
				t.Active = true
			}
		}
		if t.Title == "(untitled)" {
			t.Title = ""
		}
		tabs = append(tabs, t)
	}
	return tabs, len(tabs) > 0
}

var imagePath = regexp.MustCompile(`(?i)(/[^\s()]+|[A-Za-z]:\\[^\s()]+)\.(png|jpe?g|gif|webp)\b`)

// ScreenshotPath finds the saved image's absolute path in a
// BrowserScreenshot result ("" when there is none).
func ScreenshotPath(text string) string {
	if _, rest, ok := strings.Cut(text, "saved to "); ok {
		if m := imagePath.FindString(rest); m != "" && filepath.IsAbs(m) {
			return m
		}
	}
	for _, m := range imagePath.FindAllString(text, -1) {
		if filepath.IsAbs(m) && !strings.HasPrefix(m, "/artifacts/") {
			return m
		}
	}
	return ""
}
