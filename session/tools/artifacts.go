package tools

import (
	"cmp"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// defaultArtifactsMaxBytes caps the artifacts folder when Env sets no cap
// (embedders and tests); front ends pass storage.artifacts_max_mb.
const defaultArtifactsMaxBytes = 100 << 20

// keepNewestArtifacts is how many of the newest files survive any cap: the
// screenshots the model and the person are looking at right now must still
// load in the chat even when one file alone is larger than the cap.
const keepNewestArtifacts = 20

// pruneArtifacts deletes the oldest files of dir, in any subfolder, until
// what is left fits in maxBytes, keeping the newest keepNewestArtifacts
// files and keep (the file just written) whatever their size. Without it a
// long session or a benchmark leaves thousands of screenshots behind.
// Errors are ignored: a file that cannot be removed is counted as gone,
// and the next save tries again.
func pruneArtifacts(dir string, maxBytes int64, keep string) {
	if maxBytes <= 0 {
		maxBytes = defaultArtifactsMaxBytes
	}
	type file struct {
		path string
		size int64
		mod  int64
	}
	var files []file
	var total int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		files = append(files, file{p, info.Size(), info.ModTime().UnixNano()})
		total += info.Size()
		return nil
	})
	if total <= maxBytes || len(files) <= keepNewestArtifacts {
		return
	}
	// Oldest first; names start with the time they were saved, which
	// orders files saved within one mtime tick.
	slices.SortFunc(files, func(a, b file) int {
		if c := cmp.Compare(a.mod, b.mod); c != 0 {
			return c
		}
		return strings.Compare(filepath.Base(a.path), filepath.Base(b.path))
	})
	for _, f := range files[:len(files)-keepNewestArtifacts] {
		if total <= maxBytes {
			return
		}
		if f.path == keep {
			continue
		}
		os.Remove(f.path)
		total -= f.size
	}
}

// ArtifactsDir is the artifacts folder of the pipeline's Env ("" for
// none): front ends that show tool output, such as the panel, recognise
// paths inside it.
func (p *Pipeline) ArtifactsDir() string { return p.env.ArtifactsDir }
