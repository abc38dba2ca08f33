package assets

import (
	"bytes"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// DemoHost is the host name of the demo site's pseudo-origin. Names under
// .localhost never resolve to anything but this machine, so the name cannot
// leak a request to the internet even when something other than the fake
// browser sees it.
const DemoHost = "demo.infer.localhost"

// DemoOrigin is where the fake browser serves the demo site, from memory and
// without network. Documentation and the offline model's hints name it.
const DemoOrigin = "http://" + DemoHost + "/"

// maxDemoBody bounds what the demo site reads from a request body; the forms
// it serves never come close.
const maxDemoBody = 1 << 20

// DemoSiteHandler serves the demo site: the static files under site/ plus the
// few pages a static site cannot provide, computed in Go so that a browser
// without JavaScript (the fake browser) and Chromium see the same pages:
//
//	GET  /search?q=&field=&available=  catalog search that reflects the query
//	GET  /login                        303 to /login.html
//	POST /login                        sign-in result; sets a demo_user cookie
//	GET  /account                      who the demo_user cookie says you are
//	ANY  /echo                         method, content type and every submitted
//	                                   field in order (secret-looking values masked)
//	GET  /redirect?to=/path            302 to a path on this site
//
// The handler is safe for concurrent use and keeps no state between requests
// other than the cookie it hands the client.
func DemoSiteHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search", serveSearch)
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/login.html", http.StatusSeeOther)
	})
	mux.HandleFunc("POST /login", serveLogin)
	mux.HandleFunc("GET /account", serveAccount)
	mux.HandleFunc("/echo", serveEcho)
	mux.HandleFunc("GET /redirect", serveRedirect)
	mux.Handle("/", staticSite())
	return mux
}

// staticSite serves site/ and answers a missing file with the site's own 404
// page rather than the file server's bare text, so a browser shows a page.
func staticSite() http.Handler {
	files := SiteFS()
	server := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		if _, err := fs.Stat(files, name); err != nil {
			renderPageStatus(w, http.StatusNotFound, "Page not found", notFoundTmpl(), r.URL.Path)
			return
		}
		server.ServeHTTP(w, r)
	})
}

// book is one entry of site/catalog.json.
type book struct {
	Title     string `json:"title"`
	Author    string `json:"author"`
	Year      int    `json:"year"`
	Shelf     string `json:"shelf"`
	Available bool   `json:"available"`
}

var (
	catalogOnce sync.Once
	catalog     []book
	catalogErr  error
)

// loadCatalog decodes the embedded catalog once; the file is part of the
// binary, so a decoding failure is a build defect reported on every search.
func loadCatalog() ([]book, error) {
	catalogOnce.Do(func() {
		data, err := fs.ReadFile(SiteFS(), "catalog.json")
		if err != nil {
			catalogErr = err
			return
		}
		catalogErr = json.Unmarshal(data, &catalog)
	})
	return catalog, catalogErr
}

// searchView is what the results template shows.
type searchView struct {
	Query         string
	Field         string
	AvailableOnly bool
	Results       []book
}

func serveSearch(w http.ResponseWriter, r *http.Request) {
	books, err := loadCatalog()
	if err != nil {
		http.Error(w, "catalog unavailable: "+err.Error(), http.StatusInternalServerError)
		return
	}
	q := r.URL.Query()
	view := searchView{
		Query:         strings.TrimSpace(q.Get("q")),
		Field:         q.Get("field"),
		AvailableOnly: q.Get("available") != "",
	}
	words := strings.Fields(strings.ToLower(view.Query))
	for _, b := range books {
		if view.AvailableOnly && !b.Available {
			continue
		}
		if matchesAll(b, view.Field, words) {
			view.Results = append(view.Results, b)
		}
	}
	title := "Search"
	if view.Query != "" {
		title = "Search: " + view.Query
	}
	renderPage(w, title, searchTmpl(), view)
}

// matchesAll reports whether every word occurs in the chosen field of b
// ("title", "author", or anything else for both).
func matchesAll(b book, field string, words []string) bool {
	var hay string
	switch field {
	case "title":
		hay = b.Title
	case "author":
		hay = b.Author
	default:
		hay = b.Title + " " + b.Author
	}
	hay = strings.ToLower(hay)
	for _, w := range words {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// loginView is what the sign-in result shows. It never carries a secret's
// value, only whether one arrived.
type loginView struct {
	User     string
	Problem  string
	Remember bool
	HasOTP   bool
	HasToken bool
}

func serveLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxDemoBody)
	if err := parseAnyForm(r); err != nil {
		http.Error(w, "could not read the sign-in form: "+err.Error(), http.StatusBadRequest)
		return
	}
	view := loginView{
		User:     strings.TrimSpace(r.PostFormValue("username")),
		Remember: r.PostFormValue("remember") != "",
		HasOTP:   r.PostFormValue("otp") != "",
		HasToken: r.PostFormValue("api_token") != "",
	}
	switch {
	case view.User == "":
		view.Problem = "Enter a user name."
	case r.PostFormValue("password") == "":
		view.Problem = "Enter a password."
	}
	if view.Problem == "" {
		http.SetCookie(w, &http.Cookie{
			Name: "demo_user", Value: url.QueryEscape(view.User), Path: "/",
			HttpOnly: true, SameSite: http.SameSiteLaxMode,
		})
		renderPage(w, "Signed in", loginTmpl(), view)
		return
	}
	renderPage(w, "Sign-in failed", loginTmpl(), view)
}

// parseAnyForm parses urlencoded and multipart bodies alike, so the login
// form works whatever enctype a test gives it.
func parseAnyForm(r *http.Request) error {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		return r.ParseMultipartForm(maxDemoBody)
	}
	return r.ParseForm()
}

func serveAccount(w http.ResponseWriter, r *http.Request) {
	user := ""
	if c, err := r.Cookie("demo_user"); err == nil {
		user, _ = url.QueryUnescape(c.Value)
	}
	renderPage(w, "Account", accountTmpl(), user)
}

// echoField is one submitted name/value pair, in the order it arrived.
type echoField struct {
	Source string // "query" or "body"
	Name   string
	Value  string
}

// echoView is what the echo page shows.
type echoView struct {
	Method      string
	ContentType string
	Path        string
	Fields      []echoField
}

// secretName is the bridge protocol's redaction pattern; the echo page masks
// values of fields so named so that it never shows a secret a test typed.
var secretName = regexp.MustCompile(`(?i)pass|secret|token|otp|cvc|card`)

func serveEcho(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxDemoBody)
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	view := echoView{Method: r.Method, ContentType: mt, Path: r.URL.Path}
	query, err := orderedPairs(r.URL.RawQuery)
	if err != nil {
		http.Error(w, "bad query string: "+err.Error(), http.StatusBadRequest)
		return
	}
	for _, p := range query {
		view.Fields = append(view.Fields, echoField{"query", p[0], p[1]})
	}
	body, err := bodyPairs(r.Body, mt, params)
	if err != nil {
		http.Error(w, "could not read the form body: "+err.Error(), http.StatusBadRequest)
		return
	}
	for _, p := range body {
		view.Fields = append(view.Fields, echoField{"body", p[0], p[1]})
	}
	for i, f := range view.Fields {
		if secretName.MatchString(f.Name) && f.Value != "" {
			view.Fields[i].Value = "•••• (" + strconv.Itoa(len([]rune(f.Value))) + " characters)"
		}
	}
	renderPage(w, "Echo", echoTmpl(), view)
}

// orderedPairs splits an urlencoded string keeping the order of its pairs,
// which url.Values loses; tests assert that a form submits in tree order.
func orderedPairs(s string) ([][2]string, error) {
	var out [][2]string
	for s != "" {
		var pair string
		pair, s, _ = strings.Cut(s, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			return nil, err
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			return nil, err
		}
		out = append(out, [2]string{name, value})
	}
	return out, nil
}

// bodyPairs decodes a form body of any of the three form encodings, in order.
// A file part is shown by its file name and size, never its bytes.
func bodyPairs(body io.Reader, mediaType string, params map[string]string) ([][2]string, error) {
	switch mediaType {
	case "application/x-www-form-urlencoded":
		data, err := io.ReadAll(body)
		if err != nil {
			return nil, err
		}
		return orderedPairs(string(data))
	case "multipart/form-data":
		mr := multipart.NewReader(body, params["boundary"])
		var out [][2]string
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			data, err := io.ReadAll(part)
			if err != nil {
				return nil, err
			}
			value := string(data)
			if part.FileName() != "" || part.Header.Get("Content-Type") != "" {
				value = "file " + quoteName(part.FileName()) + ", " + strconv.Itoa(len(data)) + " bytes"
			}
			out = append(out, [2]string{part.FormName(), value})
		}
	case "text/plain":
		data, err := io.ReadAll(body)
		if err != nil {
			return nil, err
		}
		var out [][2]string
		for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\r\n"), "\r\n") {
			if line == "" {
				continue
			}
			k, v, _ := strings.Cut(line, "=")
			out = append(out, [2]string{k, v})
		}
		return out, nil
	}
	return nil, nil
}

func quoteName(s string) string {
	if s == "" {
		return "(none)"
	}
	return `"` + s + `"`
}

// serveRedirect sends the client to a path on this site only: an open
// redirector would let a page bounce a browser anywhere.
func serveRedirect(w http.ResponseWriter, r *http.Request) {
	to := r.URL.Query().Get("to")
	if !strings.HasPrefix(to, "/") || strings.HasPrefix(to, "//") || strings.Contains(to, `\`) {
		http.Error(w, "redirect target must be a path on this site, such as /table.html", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, to, http.StatusFound)
}

// renderPage executes one of the page templates inside the site's shared
// layout. Templates are parsed once; a failure here is a build defect.
func renderPage(w http.ResponseWriter, title string, body *template.Template, data any) {
	renderPageStatus(w, http.StatusOK, title, body, data)
}

// renderPageStatus is renderPage with a status code.
func renderPageStatus(w http.ResponseWriter, status int, title string, body *template.Template, data any) {
	var buf bytes.Buffer
	if err := body.Execute(&buf, data); err != nil {
		http.Error(w, "demo site template failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	var page bytes.Buffer
	err := layoutTmpl().Execute(&page, struct {
		Title string
		Body  template.HTML
	}{title, template.HTML(buf.String())}) // the body was escaped by its own template
	if err != nil {
		http.Error(w, "demo site template failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(page.Bytes())
}

// The demo site's templates are parsed on first use: the site is served
// only by the demo, and parsing them at start-up cost every run of infer.
var layoutTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("layout").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Tidewater Library</title>
<link rel="stylesheet" href="/style.css">
</head>
<body>
<header class="site">
<a class="brand" href="/">Tidewater Library</a>
<nav><a href="/search.html">Search</a> <a href="/article.html">Reading</a> <a href="/table.html">Tides</a> <a href="/forms.html">Form lab</a> <a href="/login.html">Sign in</a></nav>
</header>
<main>
{{.Body}}
</main>
<footer>Tidewater Library is the demo site built into infer.</footer>
</body>
</html>
`))
})

var searchTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("search").Parse(`<h1>Search results</h1>
<form class="inline" method="get" action="/search">
<label for="q">Search for</label> <input type="search" id="q" name="q" value="{{.Query}}"> <button type="submit">Search</button>
</form>
{{if .Query}}<p id="summary">{{len .Results}} {{if eq (len .Results) 1}}result{{else}}results{{end}} for “{{.Query}}”{{if .AvailableOnly}} on the shelf{{end}}</p>
{{else}}<p id="summary">Showing the whole catalog. Type a title or an author to narrow it down.</p>
{{end}}{{if .Results}}<ol id="results">
{{range .Results}}<li><cite>{{.Title}}</cite> by {{.Author}} ({{.Year}}) · shelf {{.Shelf}}{{if not .Available}} · on loan{{end}}</li>
{{end}}</ol>
{{else}}<p id="no-results">Nothing matched. Try another word, such as <a href="/search?q=sea">sea</a>.</p>
{{end}}<p><a href="/search.html">New search</a></p>
`))
})

var loginTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("login").Parse(`{{if .Problem}}<h1>Sign-in failed</h1>
<p id="problem">{{.Problem}}</p>
<p><a href="/login.html">Try again</a></p>
{{else}}<h1>Welcome back, {{.User}}</h1>
<ul id="details">
<li>Remember me: {{if .Remember}}yes{{else}}no{{end}}</li>
<li>One-time code: {{if .HasOTP}}received{{else}}not given{{end}}</li>
<li>API token: {{if .HasToken}}received{{else}}not given{{end}}</li>
</ul>
<p>The site never shows your password or codes back to you. <a href="/account">Your account</a></p>
{{end}}`))
})

var accountTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("account").Parse(`<h1>Your account</h1>
{{if .}}<p id="who">Signed in as {{.}}.</p>
{{else}}<p id="who">You are not signed in. <a href="/login.html">Sign in</a></p>
{{end}}`))
})

var echoTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("echo").Parse(`<h1>Echo</h1>
<p id="request">{{.Method}} {{.Path}}{{if .ContentType}} · {{.ContentType}}{{end}}</p>
{{if .Fields}}<table id="fields">
<thead><tr><th>From</th><th>Name</th><th>Value</th></tr></thead>
<tbody>
{{range .Fields}}<tr><td>{{.Source}}</td><td>{{.Name}}</td><td>{{.Value}}</td></tr>
{{end}}</tbody>
</table>
{{else}}<p id="fields">No fields were submitted.</p>
{{end}}<p><a href="/forms.html">Back to the form lab</a></p>
`))
})

var notFoundTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("404").Parse(`<h1>Page not found</h1>
<p>There is no page at {{.}} on this site. <a href="/">Go to the front page</a></p>
`))
})
