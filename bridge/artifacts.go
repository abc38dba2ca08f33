package bridge

import (
	"errors"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
)

const artifactsPrefix = "/artifacts/"

// sniffLen is how much of a file http.DetectContentType looks at.
const sniffLen = 512

// handleArtifact serves one file of the artifacts directory, read-only and
// unauthenticated as the contract says (the extension's <img> cannot send a
// token). It never lists directories and never leaves the directory: the
// path must be a plain relative path, and the file is opened through an
// os.Root, which also refuses symlinks pointing outside.
func (s *Server) handleArtifact(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: artifacts are read-only", http.StatusMethodNotAllowed)
		return
	}
	if s.opts.ArtifactsDir == "" {
		http.NotFound(w, r)
		return
	}
	rel := strings.TrimPrefix(r.URL.Path, artifactsPrefix)
	// fs.ValidPath refuses "..", ".", empty and absolute components; a
	// backslash is refused too so the rule does not depend on the OS.
	if !fs.ValidPath(rel) || rel == "." || strings.ContainsRune(rel, '\\') {
		http.NotFound(w, r)
		return
	}
	root, err := os.OpenRoot(s.opts.ArtifactsDir)
	if err != nil {
		s.log.Debug("bridge: artifacts directory unavailable", "err", err)
		http.NotFound(w, r)
		return
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Debug("bridge: refused an artifact", "path", rel, "err", err)
		}
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	ctype, err := contentType(rel, f)
	if err != nil {
		http.Error(w, "could not read the artifact", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, path.Base(rel), info.ModTime(), f)
}

// contentType picks the type by extension, falling back to sniffing the
// start of the file, which is then rewound for serving.
func contentType(name string, f io.ReadSeeker) (string, error) {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t, nil
	}
	var head [sniffLen]byte
	n, err := io.ReadFull(f, head[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	return http.DetectContentType(head[:n]), nil
}

// artifactBase is where handleArtifact is reached from the browser.
func (s *Server) artifactBase() string {
	if s.opts.ArtifactsDir == "" {
		return ""
	}
	return "http://127.0.0.1:" + strconv.Itoa(s.port)
}
