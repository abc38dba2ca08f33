package catalog

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"
)

// cacheVersion changes when the file's meaning changes; other versions are
// ignored rather than misread.
const cacheVersion = 1

const cacheName = "models.json"

// cacheFile is models.json: each provider's discovered list, with where and
// when it was fetched. It holds model ids only, never keys.
type cacheFile struct {
	Version   int                   `json:"version"`
	Providers map[string]cacheEntry `json:"providers"`
}

type cacheEntry struct {
	BaseURL   string    `json:"base_url"`
	FetchedAt time.Time `json:"fetched_at"`
	Models    []string  `json:"models"`
}

func (f *cacheFile) put(name string, e cacheEntry) {
	if f.Providers == nil {
		f.Providers = map[string]cacheEntry{}
	}
	f.Providers[name] = e
}

func (f cacheFile) clone() cacheFile {
	return cacheFile{Version: cacheVersion, Providers: maps.Clone(f.Providers)}
}

// loadCache reads the cache; a missing, unreadable or foreign file is an
// empty cache (it is only a cache: discovery rebuilds it).
func loadCache(dir string) cacheFile {
	empty := cacheFile{Version: cacheVersion, Providers: map[string]cacheEntry{}}
	if dir == "" {
		return empty
	}
	raw, err := os.ReadFile(filepath.Join(dir, cacheName))
	if err != nil {
		return empty
	}
	var f cacheFile
	if json.Unmarshal(raw, &f) != nil || f.Version != cacheVersion || f.Providers == nil {
		return empty
	}
	return f
}

// saveCache writes the cache atomically, so a crash leaves the old file or
// the new one, never half of one.
func saveCache(dir string, f cacheFile) error {
	if dir == "" {
		return nil
	}
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("saving the model list cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, cacheName+".*.tmp")
	if err != nil {
		return fmt.Errorf("saving the model list cache: %w", err)
	}
	_, werr := tmp.Write(raw)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, cacheName))
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("saving the model list cache in %s: %w", dir, werr)
	}
	return nil
}
