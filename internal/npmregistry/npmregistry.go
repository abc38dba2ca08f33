// Package npmregistry serves an installed node_modules tree as an npm
// registry, for tests: npm and npx fetch from it the packages they would
// fetch from registry.npmjs.org, so a test can start a real npx-launched
// server while sending traffic only to loopback.
package npmregistry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry is a running registry. Its packuments name tarballs on its own
// address, so npm fetches everything from it.
type Registry struct {
	// URL is the registry's base, ending in "/" as npm_config_registry
	// wants it.
	URL string
	// Host is the host:port npm connects to.
	Host string

	srv  *http.Server
	ln   net.Listener
	pkgs map[string]*pkg
	hits atomic.Int64
}

type pkg struct {
	name     string
	versions map[string]*version
}

type version struct {
	manifest map[string]any
	dir      string
	once     sync.Once
	tarball  []byte
	err      error
}

// manifestKeys are the package.json fields a packument's version carries:
// enough for npm to resolve, fetch and link the package. Peer dependencies
// are left out on purpose: npm would install them, and the tree may hold
// only the ones it needed.
var manifestKeys = []string{"name", "version", "dependencies", "optionalDependencies", "bin", "engines", "os", "cpu", "type", "main"}

// Serve reads every package.json under root's node_modules (nested ones
// too), listens on addr (a loopback address such as "127.0.0.2:0") and
// serves them until Close.
func Serve(root, addr string) (*Registry, error) {
	r := &Registry{pkgs: map[string]*pkg{}}
	nm := filepath.Join(root, "node_modules")
	err := filepath.WalkDir(nm, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "package.json" {
			return nil
		}
		dir := filepath.Dir(p)
		// Only a package's own folder: node_modules/<name> or
		// node_modules/@scope/<name>, at any depth.
		parent := filepath.Base(filepath.Dir(dir))
		if parent != "node_modules" && !(strings.HasPrefix(parent, "@") && filepath.Base(filepath.Dir(filepath.Dir(dir))) == "node_modules") {
			return nil
		}
		return r.add(p, dir)
	})
	if err != nil {
		return nil, err
	}
	if len(r.pkgs) == 0 {
		return nil, fmt.Errorf("no packages under %s", nm)
	}
	r.ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r.Host = r.ln.Addr().String()
	r.URL = "http://" + r.Host + "/"
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve)}
	go r.srv.Serve(r.ln)
	return r, nil
}

// add records one package.json.
func (r *Registry) add(file, dir string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	name, _ := all["name"].(string)
	ver, _ := all["version"].(string)
	if name == "" || ver == "" {
		return nil
	}
	m := map[string]any{}
	for _, k := range manifestKeys {
		if v, ok := all[k]; ok {
			m[k] = v
		}
	}
	p := r.pkgs[name]
	if p == nil {
		p = &pkg{name: name, versions: map[string]*version{}}
		r.pkgs[name] = p
	}
	if p.versions[ver] == nil {
		p.versions[ver] = &version{manifest: m, dir: dir}
	}
	return nil
}

// Requests counts the requests served so far.
func (r *Registry) Requests() int64 { return r.hits.Load() }

// Close stops serving.
func (r *Registry) Close() error { return r.srv.Close() }

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.hits.Add(1)
	path, err := url.PathUnescape(req.URL.EscapedPath())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	path = strings.TrimPrefix(path, "/")
	if name, file, ok := strings.Cut(path, "/-/"); ok {
		r.serveTarball(w, name, file)
		return
	}
	p := r.pkgs[path]
	if p == nil {
		http.Error(w, `{"error":"Not found"}`, http.StatusNotFound)
		return
	}
	r.servePackument(w, p)
}

// tarballName is the file name npm's registry gives a version's tarball.
func tarballName(name, ver string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return name + "-" + ver + ".tgz"
}

func (r *Registry) servePackument(w http.ResponseWriter, p *pkg) {
	vs := map[string]any{}
	var all []string
	for ver, v := range p.versions {
		tgz, err := v.pack()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		sha1sum := sha1.Sum(tgz)
		sha512sum := sha512.Sum512(tgz)
		m := map[string]any{}
		for k, x := range v.manifest {
			m[k] = x
		}
		m["_id"] = p.name + "@" + ver
		m["dist"] = map[string]any{
			"tarball":   r.URL + p.name + "/-/" + tarballName(p.name, ver),
			"shasum":    hex.EncodeToString(sha1sum[:]),
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sha512sum[:]),
		}
		vs[ver] = m
		all = append(all, ver)
	}
	// Several installed copies may differ in version; "latest" is the one
	// sorted last, which serves the tests' single top-level packages.
	sort.Strings(all)
	doc := map[string]any{
		"_id":       p.name,
		"name":      p.name,
		"versions":  vs,
		"dist-tags": map[string]string{"latest": all[len(all)-1]},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(doc)
}

func (r *Registry) serveTarball(w http.ResponseWriter, name, file string) {
	p := r.pkgs[name]
	if p != nil {
		for ver, v := range p.versions {
			if tarballName(name, ver) != file {
				continue
			}
			tgz, err := v.pack()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(tgz)
			return
		}
	}
	http.NotFound(w, nil)
}

// pack builds the version's tarball once: its folder under package/,
// without the node_modules nested in it (those are packages of their own).
func (v *version) pack() ([]byte, error) {
	v.once.Do(func() { v.tarball, v.err = packDir(v.dir) })
	return v.tarball, v.err
}

func packDir(dir string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "node_modules" && p != dir {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // links, as npm's own tarballs have none
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: "package/" + filepath.ToSlash(rel), Mode: int64(info.Mode().Perm()), Size: int64(len(body)), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(body)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
