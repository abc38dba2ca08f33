package bridge

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pngHeader is enough of a PNG for sniffing and for byte comparisons.
var pngHeader = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// artifactTree builds:
//
//	outside/secret.txt          (must never be served)
//	artifacts/images/chart.png
//	artifacts/notes             (no extension: sniffed as text)
//	artifacts/link-out       -> ../outside/secret.txt
//	artifacts/abs-link       -> <abs>/outside/secret.txt
//	artifacts/dir-out        -> ../outside
//	artifacts/link-in        -> images/chart.png
func artifactTree(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	dir := filepath.Join(base, "artifacts")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(outside, 0o755))
	must(os.MkdirAll(filepath.Join(dir, "images"), 0o755))
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TOP SECRET"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "images", "chart.png"), pngHeader, 0o644))
	must(os.WriteFile(filepath.Join(dir, "notes"), []byte("plain words here\n"), 0o644))
	must(os.Symlink("../outside/secret.txt", filepath.Join(dir, "link-out")))
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "abs-link")))
	must(os.Symlink("../outside", filepath.Join(dir, "dir-out")))
	must(os.Symlink("images/chart.png", filepath.Join(dir, "link-in")))
	return dir
}

// rawRequest sends a request line exactly as given (no client-side path
// cleaning) and returns the response and its body.
func rawRequest(t *testing.T, srv *Server, method, target, host string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(srv.Port()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(guard))
	if host == "" {
		host = "127.0.0.1:" + strconv.Itoa(srv.Port())
	}
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", method, target, host)
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

func TestArtifactTraversalIsRefused(t *testing.T) {
	t.Parallel()
	dir := artifactTree(t)
	ts := startServer(t, func(o *Options) { o.ArtifactsDir = dir })
	abs := filepath.Join(filepath.Dir(dir), "outside", "secret.txt")
	for _, target := range []string{
		"/artifacts/../outside/secret.txt",
		"/artifacts/%2e%2e/outside/secret.txt",
		"/artifacts/%2E%2E/outside/secret.txt",
		"/artifacts/images/../../outside/secret.txt",
		"/artifacts/images/%2e%2e/%2e%2e/outside/secret.txt",
		"/artifacts/..%2foutside%2fsecret.txt",
		"/artifacts/" + abs,
		"/artifacts/%2F" + strings.TrimPrefix(abs, "/"),
		"/artifacts//etc/passwd",
		"/artifacts/link-out",
		"/artifacts/abs-link",
		"/artifacts/dir-out/secret.txt",
		"/artifacts/images/",
		"/artifacts/images",
		"/artifacts/./images/chart.png",
		"/artifacts/images\\..\\..\\outside\\secret.txt",
	} {
		t.Run(target, func(t *testing.T) {
			resp, body := rawRequest(t, ts.Server, http.MethodGet, target, "")
			if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d, want 404 (or 400)", resp.StatusCode)
			}
			if strings.Contains(body, "TOP SECRET") {
				t.Errorf("leaked the file outside the artifacts dir")
			}
		})
	}
}

func TestArtifactsAreServedWithTypeAndNosniff(t *testing.T) {
	t.Parallel()
	dir := artifactTree(t)
	ts := startServer(t, func(o *Options) { o.ArtifactsDir = dir })
	for _, tc := range []struct{ path, ctype, body string }{
		{"/artifacts/images/chart.png", "image/png", string(pngHeader)},
		{"/artifacts/link-in", "image/png", string(pngHeader)}, // symlink inside the root, sniffed
		{"/artifacts/notes", "text/plain; charset=utf-8", "plain words here\n"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := rawRequest(t, ts.Server, http.MethodGet, tc.path, "")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := resp.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type = %q, want %q", got, tc.ctype)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Error("no X-Content-Type-Options: nosniff")
			}
			if body != tc.body {
				t.Errorf("body = %q", body)
			}
		})
	}
}

func TestArtifactHEADHasNoBody(t *testing.T) {
	t.Parallel()
	dir := artifactTree(t)
	ts := startServer(t, func(o *Options) { o.ArtifactsDir = dir })
	resp, body := rawRequest(t, ts.Server, http.MethodHead, "/artifacts/images/chart.png", "")
	if resp.StatusCode != http.StatusOK || body != "" {
		t.Fatalf("HEAD: %d with body %q", resp.StatusCode, body)
	}
	if resp.Header.Get("Content-Length") != strconv.Itoa(len(pngHeader)) || resp.Header.Get("Content-Type") != "image/png" {
		t.Errorf("HEAD headers = %v", resp.Header)
	}
}

func TestArtifactWriteMethodsGet405(t *testing.T) {
	t.Parallel()
	dir := artifactTree(t)
	ts := startServer(t, func(o *Options) { o.ArtifactsDir = dir })
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		resp, _ := rawRequest(t, ts.Server, m, "/artifacts/images/chart.png", "")
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: status %d, want 405", m, resp.StatusCode)
		}
		if resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: Allow = %q", m, resp.Header.Get("Allow"))
		}
	}
}

func TestArtifactHostCheck(t *testing.T) {
	t.Parallel()
	dir := artifactTree(t)
	ts := startServer(t, func(o *Options) { o.ArtifactsDir = dir })
	port := strconv.Itoa(ts.Port())
	for _, host := range []string{"evil.example:" + port, "127.0.0.1:1", "[::1]:" + port} {
		resp, body := rawRequest(t, ts.Server, http.MethodGet, "/artifacts/images/chart.png", host)
		if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "PNG") {
			t.Errorf("Host %s: status %d", host, resp.StatusCode)
		}
	}
	resp, _ := rawRequest(t, ts.Server, http.MethodGet, "/artifacts/images/chart.png", "localhost:"+port)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("Host localhost: status %d", resp.StatusCode)
	}
}

func TestArtifactsWithoutADirectoryAre404(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	resp, _ := rawRequest(t, ts.Server, http.MethodGet, "/artifacts/images/chart.png", "")
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d, want 404", resp.StatusCode)
	}
	missing := startServer(t, func(o *Options) { o.ArtifactsDir = filepath.Join(t.TempDir(), "not-yet") })
	resp, _ = rawRequest(t, missing.Server, http.MethodGet, "/artifacts/x.png", "")
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("missing dir: status %d, want 404", resp.StatusCode)
	}
}

func TestUnknownPathsAre404(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	for _, p := range []string{"/", "/ws/", "/artifacts", "/status/x", "/favicon.ico", "/../ws"} {
		resp, _ := rawRequest(t, ts.Server, http.MethodGet, p, "")
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, resp.StatusCode)
		}
	}
}
