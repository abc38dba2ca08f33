package fakebrowser

import (
	"bytes"
	"fmt"
	"html/template"
	"image"
	_ "image/gif" // image sizes in titles, like Chrome's "logo.gif (16×16)"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// buildPage turns a response into a page the way Chrome presents it: HTML is
// parsed; text-like types are shown as text in a pre; an error status with
// an empty body gets Chrome's error page; anything else gets a short
// description of what was loaded.
func buildPage(resp *response) (*page, error) {
	switch {
	case resp.url.Scheme == "about":
		return newPageFromHTML(resp.url, "", "GET")
	case resp.status >= 400 && len(bytes.TrimSpace(resp.body)) == 0:
		return newPageFromHTML(resp.url, errorPageHTML(resp), resp.method)
	case isHTMLType(resp.mediaType):
		text, err := decodeText(resp.body, resp.contentType)
		if err != nil {
			return nil, err
		}
		return newPageFromHTML(resp.url, text, resp.method)
	case isTextType(resp.mediaType):
		text, err := decodeText(resp.body, resp.contentType)
		if err != nil {
			return nil, err
		}
		return newPage(resp.url, textDocument(text), resp.method), nil
	}
	p, err := newPageFromHTML(resp.url, binaryPageHTML(resp), resp.method)
	if err != nil {
		return nil, err
	}
	p.title = binaryTitle(resp)
	return p, nil
}

func newPageFromHTML(u *url.URL, src, method string) (*page, error) {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", u.Redacted(), err)
	}
	return newPage(u, doc, method), nil
}

func isHTMLType(mt string) bool {
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// isTextType reports whether Chrome shows a type as plain text rather than
// offering a download.
func isTextType(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "text/"):
		return true
	case mt == "application/json", mt == "application/xml", mt == "application/javascript",
		mt == "application/ecmascript", mt == "application/x-javascript",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	return false
}

// decodeText converts a body to UTF-8 using the Content-Type charset, a
// byte order mark or, for HTML, a meta charset in the first kilobyte.
func decodeText(body []byte, contentType string) (string, error) {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" || enc == nil {
		s := string(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
		}
		return s, nil
	}
	out, err := io.ReadAll(enc.NewDecoder().Reader(bytes.NewReader(body)))
	if err != nil {
		return "", fmt.Errorf("decode %s text: %w", name, err)
	}
	return string(out), nil
}

// textDocument is the document Chrome makes for a text resource: the text
// in a pre element that wraps long lines and keeps all white space.
func textDocument(text string) *html.Node {
	doc := &html.Node{Type: html.DocumentNode}
	root := &html.Node{Type: html.ElementNode, Data: "html"}
	head := &html.Node{Type: html.ElementNode, Data: "head"}
	body := &html.Node{Type: html.ElementNode, Data: "body"}
	pre := &html.Node{Type: html.ElementNode, Data: "pre",
		Attr: []html.Attribute{{Key: "style", Val: "word-wrap: break-word; white-space: pre-wrap;"}}}
	doc.AppendChild(root)
	root.AppendChild(head)
	root.AppendChild(body)
	body.AppendChild(pre)
	if text != "" {
		pre.AppendChild(&html.Node{Type: html.TextNode, Data: text})
	}
	return doc
}

var errorPageTmpl = template.Must(template.New("error").Parse(`<!doctype html>
<html><head><title>{{.Host}}</title></head>
<body><div><h1>This page isn’t working</h1>
<p>{{if .Host}}{{.Host}} sent an empty response with an error status.{{else}}The server sent an empty response with an error status.{{end}}</p>
<p>If the problem continues, contact the site owner.</p>
<div>HTTP ERROR {{.Status}}</div></div></body></html>`))

// errorPageHTML is Chrome's page for an error status without a body.
func errorPageHTML(resp *response) string {
	var b strings.Builder
	_ = errorPageTmpl.Execute(&b, struct {
		Host   string
		Status int
	}{resp.url.Hostname(), resp.status})
	return b.String()
}

var binaryPageTmpl = template.Must(template.New("binary").Parse(`<!doctype html>
<html><head></head><body><p>{{.}}</p></body></html>`))

// binaryPageHTML describes a resource the fake browser cannot display.
func binaryPageHTML(resp *response) string {
	desc := fmt.Sprintf("%s: %s, %s.", fileName(resp), resp.mediaType, formatBytes(int64(len(resp.body))))
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(resp.body)); err == nil {
		desc = fmt.Sprintf("%s: %s image, %d×%d pixels, %s.", fileName(resp), resp.mediaType,
			cfg.Width, cfg.Height, formatBytes(int64(len(resp.body))))
	}
	var b strings.Builder
	_ = binaryPageTmpl.Execute(&b, desc)
	return b.String()
}

// binaryTitle is Chrome's tab title for an image ("name.png (64×64)"), or the
// file name for other resources.
func binaryTitle(resp *response) string {
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(resp.body)); err == nil {
		return fmt.Sprintf("%s (%d×%d)", fileName(resp), cfg.Width, cfg.Height)
	}
	return fileName(resp)
}

func fileName(resp *response) string {
	name := path.Base(resp.url.Path)
	if name == "." || name == "/" || name == "" {
		return resp.url.Host
	}
	return name
}
