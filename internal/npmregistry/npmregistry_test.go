package npmregistry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return b
}

// TestAnInstalledTreeIsServedAsARegistry: scoped and nested packages get
// packuments whose tarballs are served with matching integrity, holding
// the package's files under package/ and not its nested node_modules.
func TestAnInstalledTreeIsServedAsARegistry(t *testing.T) {
	root := t.TempDir()
	nm := filepath.Join(root, "node_modules")
	write(t, filepath.Join(nm, "@s", "a", "package.json"), `{"name":"@s/a","version":"1.2.3","bin":{"a":"cli.js"},"dependencies":{"b":"^2.0.0"},"scripts":{"x":"y"}}`)
	write(t, filepath.Join(nm, "@s", "a", "cli.js"), "#!/usr/bin/env node\n")
	write(t, filepath.Join(nm, "@s", "a", "node_modules", "b", "package.json"), `{"name":"b","version":"2.1.0"}`)
	write(t, filepath.Join(nm, "b", "package.json"), `{"name":"b","version":"1.0.0"}`)
	write(t, filepath.Join(nm, "b", "lib", "fixture", "package.json"), `{"name":"not-a-package","version":"9.9.9"}`)

	r, err := Serve(root, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	for _, path := range []string{"@s%2fa", "@s/a"} {
		var doc struct {
			Versions map[string]struct {
				Scripts      any               `json:"scripts"`
				Dependencies map[string]string `json:"dependencies"`
				Dist         struct{ Tarball, Integrity string }
			}
			DistTags map[string]string `json:"dist-tags"`
		}
		if err := json.Unmarshal(get(t, r.URL+path), &doc); err != nil {
			t.Fatal(err)
		}
		v, ok := doc.Versions["1.2.3"]
		if !ok || doc.DistTags["latest"] != "1.2.3" || v.Dependencies["b"] != "^2.0.0" || v.Scripts != nil {
			t.Fatalf("packument of %s: %+v", path, doc)
		}
		tgz := get(t, v.Dist.Tarball)
		sum := sha512.Sum512(tgz)
		if v.Dist.Integrity != "sha512-"+base64.StdEncoding.EncodeToString(sum[:]) || !strings.HasPrefix(v.Dist.Tarball, r.URL) {
			t.Fatalf("dist does not match the tarball: %+v", v.Dist)
		}
		gz, err := gzip.NewReader(bytes.NewReader(tgz))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, h.Name)
		}
		sort.Strings(names)
		if got := strings.Join(names, " "); got != "package/cli.js package/package.json" {
			t.Fatalf("tarball holds %s", got)
		}
	}
	var b struct{ Versions map[string]any }
	json.Unmarshal(get(t, r.URL+"b"), &b)
	if len(b.Versions) != 2 {
		t.Fatalf("both installed versions of b are not offered: %v", b.Versions)
	}
	resp, err := http.Get(r.URL + "not-a-package")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("a package.json that is no package's was served: %s", resp.Status)
	}
}
