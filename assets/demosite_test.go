package assets

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// get serves one request through the demo handler.
func get(t *testing.T, method, target, contentType, body string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	DemoSiteHandler().ServeHTTP(rec, req)
	return rec.Result()
}

func bodyOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestStaticPagesAreServed(t *testing.T) {
	pages, err := fs.Glob(SiteFS(), "*.html")
	if err != nil || len(pages) < 6 {
		t.Fatalf("site pages: %v %v", pages, err)
	}
	for _, name := range append(pages, "style.css", "notes.txt", "catalog.json") {
		path := "/" + name
		if name == "index.html" {
			path = "/"
		}
		resp := get(t, "GET", path, "", "")
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", path, resp.StatusCode)
		}
		body := bodyOf(t, resp)
		if strings.HasSuffix(name, ".html") && !strings.Contains(body, "<title>") {
			t.Errorf("%s has no title", path)
		}
	}
	resp := get(t, "GET", "/nope.html", "", "")
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(bodyOf(t, resp), "There is no page at /nope.html") {
		t.Errorf("missing page: status %d", resp.StatusCode)
	}
}

func TestCatalogSearch(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []string
		not   []string
	}{
		{"q=conrad&field=author", []string{"2 results for “conrad”", "Lord Jim", "Typhoon"}, []string{"Moby-Dick"}},
		{"q=sea&available=yes", []string{"3 results for “sea” on the shelf"}, []string{"The Old Man and the Sea"}},
		{"q=conrad&field=title", []string{"0 results", "Nothing matched"}, nil},
		{"q=", []string{"Showing the whole catalog", "Robinson Crusoe"}, nil},
		{"q=%3Cscript%3E", []string{"&lt;script&gt;"}, []string{"<script>"}},
	} {
		body := bodyOf(t, get(t, "GET", "/search?"+tc.query, "", ""))
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("search %s: missing %q", tc.query, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(body, n) {
				t.Errorf("search %s: unexpected %q", tc.query, n)
			}
		}
	}
}

func TestLogin(t *testing.T) {
	form := url.Values{"username": {"alice"}, "password": {"hunter2"}, "otp": {"123456"}, "remember": {"yes"}}
	resp := get(t, "POST", "/login", "application/x-www-form-urlencoded", form.Encode())
	body := bodyOf(t, resp)
	for _, w := range []string{"Welcome back, alice", "Remember me: yes", "One-time code: received", "API token: not given"} {
		if !strings.Contains(body, w) {
			t.Errorf("login page lacks %q", w)
		}
	}
	if strings.Contains(body, "hunter2") || strings.Contains(body, "123456") {
		t.Error("the login result shows a secret")
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "demo_user" {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != "alice" {
		t.Fatalf("cookies = %v", resp.Cookies())
	}
	req := httptest.NewRequest("GET", "/account", nil)
	req.AddCookie(cookie)
	rec := httptest.NewRecorder()
	DemoSiteHandler().ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), "Signed in as alice.") {
		t.Error("the account page does not know the cookie")
	}

	body = bodyOf(t, get(t, "POST", "/login", "application/x-www-form-urlencoded", "username=bob"))
	if !strings.Contains(body, "Sign-in failed") || !strings.Contains(body, "Enter a password.") {
		t.Error("a login without a password succeeded")
	}
	if resp := get(t, "GET", "/login", "", ""); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login.html" {
		t.Errorf("GET /login: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestEchoKeepsOrderAndMasksSecrets(t *testing.T) {
	body := bodyOf(t, get(t, "POST", "/echo?b=2&a=1", "application/x-www-form-urlencoded", "z=last+one&api_token=abc&y=%E2%9C%93"))
	want := []string{
		"<td>query</td><td>b</td><td>2</td>",
		"<td>query</td><td>a</td><td>1</td>",
		"<td>body</td><td>z</td><td>last one</td>",
		"<td>body</td><td>api_token</td><td>•••• (3 characters)</td>",
		"<td>body</td><td>y</td><td>✓</td>",
	}
	last := -1
	for _, w := range want {
		i := strings.Index(body, w)
		if i < 0 || i < last {
			t.Fatalf("echo body lacks %q in order:\n%s", w, body)
		}
		last = i
	}
	if strings.Contains(body, "abc") {
		t.Error("echo shows a token")
	}
}

func TestRedirectStaysOnSite(t *testing.T) {
	if resp := get(t, "GET", "/redirect?to=/table.html", "", ""); resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/table.html" {
		t.Errorf("local redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, to := range []string{"//evil.example/", "https://evil.example/", `/\evil`, ""} {
		if resp := get(t, "GET", "/redirect?to="+url.QueryEscape(to), "", ""); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("redirect to %q: status %d", to, resp.StatusCode)
		}
	}
}

func TestDemoOrigin(t *testing.T) {
	u, err := url.Parse(DemoOrigin)
	if err != nil || u.Host != DemoHost || u.Scheme != "http" || u.Path != "/" {
		t.Fatalf("DemoOrigin %q does not name DemoHost", DemoOrigin)
	}
}
