package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// A confined command that can write the project swaps notes.txt and a
// link to a secret outside it, back and forth with renameat2's
// RENAME_EXCHANGE, as fast as it can, while the agent reads and writes
// notes.txt through the pipeline: 1,000 Reads in standard mode and 1,000
// Writes in auto mode, where neither asks for a file inside the project.
// Before, some Reads returned the secret and some Writes replaced it; now
// none does. Each call either works on the project's own notes.txt, is
// refused because it changed, or is judged outside the project and asks
// (here: no one approves).
func TestReadWriteRaceWithLinkSwapNeverEscapes(t *testing.T) {
	t.Parallel()
	const calls = 1000
	env := newEnv(t)
	const secret = "SECRET-ssh-key\n"
	outside := outsideFile(t, env, "secret.txt", secret)
	notes := filepath.Join(env.Root, "notes.txt")
	swap := filepath.Join(env.Root, "swap")
	writeFiles(t, env.Root, map[string]string{"notes.txt": "public\n"})
	if err := os.Symlink(outside, swap); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, notes, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
			swaps.Add(1)
			// A Write that lands while the link is at notes.txt replaces
			// the link itself; plant a new one so the race goes on.
			if !isLink(notes) && !isLink(swap) {
				tmp := filepath.Join(env.Root, ".planted")
				if err := os.Symlink(outside, tmp); err == nil {
					_ = os.Rename(tmp, swap)
				}
			}
		}
	}()

	p := NewPipeline(PipelineConfig{Env: env})
	var reads, writes atomic.Int64
	var escapes []string
	var mu sync.Mutex
	escaped := func(s string) {
		mu.Lock()
		escapes = append(escapes, s)
		mu.Unlock()
	}
	var callers sync.WaitGroup
	callers.Add(2)
	go func() {
		defer callers.Done()
		for i := 0; i < calls; i++ {
			out := p.Run(context.Background(), Call{ID: "r", Name: "Read", Args: `{"path": "notes.txt"}`, Origin: OriginAgent}, Standard)
			if strings.Contains(out.Output, "SECRET") {
				escaped("Read returned the secret: " + out.Output)
			}
			if out.Success {
				reads.Add(1)
			}
		}
	}()
	go func() {
		defer callers.Done()
		for i := 0; i < calls; i++ {
			out := p.Run(context.Background(), Call{ID: "w", Name: "Write", Args: `{"path": "notes.txt", "content": "written\n"}`, Origin: OriginAgent}, Auto)
			if data, err := os.ReadFile(outside); err != nil || string(data) != secret {
				escaped("a Write changed the outside file: " + out.Output)
			}
			if out.Success {
				writes.Add(1)
			}
		}
	}()
	callers.Wait()
	close(stop)
	wg.Wait()

	if len(escapes) > 0 {
		t.Fatalf("%d escapes, the first: %s", len(escapes), escapes[0])
	}
	if got := readString(t, outside); got != secret {
		t.Fatalf("the outside file is now %q", got)
	}
	info, err := os.Lstat(outside)
	if err != nil || !info.Mode().IsRegular() {
		t.Fatalf("the outside file is no longer a regular file: %v, %v", info, err)
	}
	// Not a timing assertion: the loop must have raced at all for the
	// result to mean anything, and calls that land between swaps work.
	if swaps.Load() == 0 || reads.Load() == 0 || writes.Load() == 0 {
		t.Fatalf("the race did not happen: %d swaps, %d reads and %d writes worked", swaps.Load(), reads.Load(), writes.Load())
	}
	t.Logf("%d swaps; %d of %d Reads and %d of %d Writes worked, none outside the project", swaps.Load(), reads.Load(), calls, writes.Load(), calls)
}

func isLink(p string) bool {
	info, err := os.Lstat(p)
	return err == nil && info.Mode()&os.ModeSymlink != 0
}
