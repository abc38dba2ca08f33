package wire

import "testing"

func TestPlainMarkdown(t *testing.T) {
	for in, want := range map[string]string{
		"MCP client · BrowserTabs — ✓ 1 open tab": "MCP client · BrowserTabs — ✓ 1 open tab",
		"https://example.com/a?b=c":               "https://example.com/a?b=c",
		"![x](https://evil.example/p.png)":        `\!\[x\]\(https://evil.example/p.png\)`,
		"<img src=x> **b** `c` a|b ~~d~~ &lt; \\": `\<img src=x\> \*\*b\*\* \` + "`" + `c\` + "`" + ` a\|b \~\~d\~\~ \&lt; \\`,
		"_under_ {x} #1":                          `\_under\_ \{x\} \#1`,
	} {
		if got := PlainMarkdown(in); got != want {
			t.Errorf("PlainMarkdown(%q) = %q, want %q", in, got, want)
		}
	}
}
