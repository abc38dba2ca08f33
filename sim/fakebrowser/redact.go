package fakebrowser

import (
	"context"

	"golang.org/x/net/html"

	"github.com/infer-workspace/infer/sim/redact"
)

// redacted replaces the value of a secret field wherever the fake browser
// would otherwise hand it out (read, screenshot).
const redacted = redact.Placeholder

// attrsOf adapts an element to the shared rule's attribute lookup.
func attrsOf(n *html.Node) redact.Attrs {
	return func(key string) (string, bool) { return attr(n, key) }
}

// isSecretField reports whether n is an input or textarea whose value the
// rule (package redact) keeps secret.
func isSecretField(n *html.Node) bool {
	return (is(n, "input") || is(n, "textarea")) && redact.SecretAttrs(attrsOf(n))
}

// isSecretRegion reports whether n is an editable region whose text the
// rule keeps secret.
func isSecretRegion(n *html.Node) bool {
	return n.Type == html.ElementNode && redact.EditableRegion(attrsOf(n)) && redact.SecretAttrs(attrsOf(n))
}

// inSecretRegion reports whether n is a secret region or inside one.
func inSecretRegion(n *html.Node) bool {
	for e := n; e != nil && e.Type == html.ElementNode; e = e.Parent {
		if isSecretRegion(e) {
			return true
		}
	}
	return false
}

// redactedText is innerText of el with the text of the secret regions and
// secret textareas under it removed, the way the page script does it in
// Chromium (see package redact).
func redactedText(ctx context.Context, el *html.Node) (string, error) {
	text, err := innerText(ctx, el)
	if err != nil {
		return "", err
	}
	var secrets []string
	var walk func(*html.Node) error
	walk = func(n *html.Node) error {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch {
			case isSecretRegion(c):
				s, err := innerText(ctx, c)
				if err != nil {
					return err
				}
				secrets = append(secrets, s)
				continue // its text is gone whole
			case is(c, "textarea") && isSecretField(c):
				// Its initial text is what an element that is not
				// rendered reads through textContent.
				secrets = append(secrets, textContent(c))
			}
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(el); err != nil {
		return "", err
	}
	return redact.RemoveAll(text, secrets), nil
}
