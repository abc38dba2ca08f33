package tools

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/browser"
)

// newEnv makes a project root and an artifacts dir in a temp directory.
func newEnv(t *testing.T) *Env {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "project")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// Resolve symlinks (macOS /var → /private/var) so paths compare.
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{
		Root:         root,
		ArtifactsDir: filepath.Join(dir, "artifacts"),
		Now:          func() time.Time { return time.Date(2026, 9, 2, 10, 30, 0, 0, time.UTC) },
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// run calls a tool through a pipeline in auto mode, where nothing inside
// the project asks.
func run(t *testing.T, env *Env, name, args string) Outcome {
	t.Helper()
	p := NewPipeline(PipelineConfig{Env: env})
	return p.Run(context.Background(), Call{ID: "c1", Name: name, Args: args, Origin: OriginAgent}, Auto)
}

// fakeBrowser is a browser.Driver with one tab whose state tests set.
type fakeBrowser struct {
	mu       sync.Mutex
	url      string
	title    string
	content  string
	missing  bool
	image    []byte
	mime     string
	tabs     []browser.Tab
	err      error
	commands []browser.Command
}

func (f *fakeBrowser) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commands = append(f.commands, cmd)
	if f.err != nil {
		return browser.Result{}, f.err
	}
	if err := ctx.Err(); err != nil {
		return browser.Result{}, err
	}
	res := browser.Result{URL: f.url, Title: f.title}
	switch cmd.Action {
	case browser.Navigate:
		f.url, f.title = cmd.URL, "Page at "+cmd.URL
		res.URL, res.Title = f.url, f.title
	case browser.Read:
		res.Content, res.Missing = f.content, f.missing
	case browser.Screenshot:
		res.Image, res.ImageMIME = f.image, f.mime
	case browser.Tabs:
		res.Tabs = f.tabs
	}
	return res, nil
}

func (f *fakeBrowser) last() browser.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.commands[len(f.commands)-1]
}
