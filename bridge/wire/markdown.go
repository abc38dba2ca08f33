package wire

import "strings"

// markdownSpecial are the characters that make Markdown out of text in the
// middle of a line: emphasis, code, links and images, autolinks and raw
// HTML, entities, tables and strikethrough.
const markdownSpecial = "\\`*_{}[]()<>!|~&#"

// PlainMarkdown returns one line of text for the panel, which renders a
// run's text as Markdown, so that it shows as the same words and nothing
// more: no image the panel would fetch (carrying what it quotes to the
// image's host), no link, no HTML. Every character that could start
// Markdown is escaped with a backslash, which CommonMark allows before any
// ASCII punctuation and renders as the character itself. It is for text
// quoted inside a line that starts with infer's own words (a list, a
// heading or a quote start only at a line's beginning).
func PlainMarkdown(s string) string {
	if !strings.ContainsAny(s, markdownSpecial) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune(markdownSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
