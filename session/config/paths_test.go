package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adrg/xdg"
)

func TestHomeFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(HomeEnv, dir)
	got, err := Home()
	if err != nil || got != dir {
		t.Fatalf("Home() = %q, %v; want %q", got, err, dir)
	}

	// A relative INFER_HOME is made absolute against the working directory.
	t.Chdir(dir)
	t.Setenv(HomeEnv, "rel/home")
	got, err = Home()
	if err != nil || got != filepath.Join(dir, "rel", "home") {
		t.Fatalf("Home() = %q, %v; want it under %q", got, err, dir)
	}
}

// TestHomeFromReadsTheGivenEnvironment: HomeFrom sees only what getenv
// returns, not the process's INFER_HOME.
func TestHomeFromReadsTheGivenEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(HomeEnv, filepath.Join(dir, "process"))
	got, err := HomeFrom(func(k string) string {
		if k == HomeEnv {
			return filepath.Join(dir, "given")
		}
		return ""
	})
	if err != nil || got != filepath.Join(dir, "given") {
		t.Fatalf("HomeFrom = %q, %v; want the given home", got, err)
	}
}

func TestHomeDefault(t *testing.T) {
	userHome := t.TempDir()
	t.Setenv("HOME", userHome)
	t.Setenv(HomeEnv, "")
	got, err := Home()
	if err != nil || got != filepath.Join(userHome, ".infer") {
		t.Fatalf("Home() = %q, %v; want ~/.infer", got, err)
	}
	t.Setenv(HomeEnv, "~/elsewhere")
	got, err = Home()
	if err != nil || got != filepath.Join(userHome, "elsewhere") {
		t.Fatalf("Home() with ~ = %q, %v", got, err)
	}
}

func TestProjectRoot(t *testing.T) {
	base := t.TempDir()
	base, _ = filepath.EvalSymlinks(base)

	repo := filepath.Join(base, "repo")
	deep := filepath.Join(repo, "a", "b")
	mustMkdir(t, filepath.Join(repo, ".git"))
	mustMkdir(t, deep)

	// A worktree or submodule has a .git file instead of a directory.
	worktree := filepath.Join(base, "worktree")
	mustMkdir(t, filepath.Join(worktree, "src"))
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: /elsewhere\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	plain := filepath.Join(base, "plain", "dir")
	mustMkdir(t, plain)

	for _, tc := range []struct{ start, want string }{
		{deep, repo},
		{repo, repo},
		{filepath.Join(worktree, "src"), worktree},
		{plain, plain},
	} {
		got, err := ProjectRoot(tc.start)
		if err != nil || got != tc.want {
			t.Errorf("ProjectRoot(%q) = %q, %v; want %q", tc.start, got, err, tc.want)
		}
	}
}

func TestProjectSlug(t *testing.T) {
	slug := ProjectSlug("/home/alice/src/infer")
	if !strings.HasPrefix(slug, "home-alice-src-infer-") || len(slug) != len("home-alice-src-infer-")+8 {
		t.Fatalf("slug = %q", slug)
	}
	if ProjectSlug("/home/alice/src/infer/") != slug {
		t.Error("a trailing slash changed the slug")
	}

	// Paths that read the same once lowercased and punctuation-folded must
	// still get distinct slugs.
	variants := []string{
		"/home/alice/src/infer",
		"/home/alice/src/Infer",
		"/home/alice/src/INFER",
		"/home/alice/src-infer",
		"/home/alice/src infer",
		"/home/alice/src_infer",
		"/home/alice/src/infer!",
		"/Home/Alice/Src/Infer",
	}
	seen := map[string]string{}
	for _, p := range variants {
		s := ProjectSlug(p)
		if prev, dup := seen[s]; dup {
			t.Errorf("%q and %q share slug %q", prev, p, s)
		}
		seen[s] = p
		for _, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
				t.Errorf("slug %q has %q", s, r)
			}
		}
	}

	long := "/" + strings.Repeat("very-long-directory-name/", 20) + "project"
	s := ProjectSlug(long)
	if len(s) > slugReadableMax+9 || !strings.Contains(s, "project-") {
		t.Errorf("long slug = %q (%d bytes)", s, len(s))
	}
	if s := ProjectSlug("/"); len(s) != 8 {
		t.Errorf("slug of / = %q", s)
	}
	if s := ProjectSlug("/home/.hidden"); strings.HasPrefix(s, ".") || strings.HasPrefix(s, "-") {
		t.Errorf("slug %q starts with a dot or dash", s)
	}
}

func TestProjectDirs(t *testing.T) {
	home, root := "/h", "/src/app"
	slug := ProjectSlug(root)
	if got := ConversationsDir(home, root); got != filepath.Join("/h", "projects", slug, "conversations") {
		t.Errorf("ConversationsDir = %q", got)
	}
	if got := ArtifactsDir(home, root); got != filepath.Join("/h", "projects", slug, "artifacts") {
		t.Errorf("ArtifactsDir = %q", got)
	}
}

func TestXDGDirs(t *testing.T) {
	t.Cleanup(xdg.Reload) // registered first, so it runs after the env is restored
	cacheDir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cacheDir)
	xdg.Reload()

	profile, err := CacheDir(filepath.Join("chromium", "e2e"))
	if err != nil || profile != filepath.Join(cacheDir, "infer", "chromium", "e2e") {
		t.Fatalf("CacheDir = %q, %v", profile, err)
	}
	fi, err := os.Stat(profile)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("profile dir: %v, %v", fi, err)
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
