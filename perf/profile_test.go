package perf

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestProfileHookOnlyInPprofBuilds runs `infer version` with the profile
// variables set: a build with the "pprof" tag writes a CPU profile, an
// allocation profile and an execution trace, and an ordinary build writes
// nothing, so an installed infer never profiles itself because of its
// environment.
func TestProfileHookOnlyInPprofBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds infer twice")
	}
	bin := t.TempDir()
	for _, b := range []struct{ out, tags string }{{"infer-pprof", "pprof"}, {"infer-plain", ""}} {
		args := []string{"build", "-o", filepath.Join(bin, b.out)}
		if b.tags != "" {
			args = append(args, "-tags", b.tags)
		}
		if out, err := exec.Command("go", append(args, "github.com/infer-workspace/infer/cmd/infer")...).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.out, err, out)
		}
	}
	run := func(name string) (cpu, allocs, trace string) {
		dir := t.TempDir()
		cpu, allocs, trace = filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "allocs.pprof"), filepath.Join(dir, "run.trace")
		sb := newSandbox(t, "")
		env := append(sb.env, "INFER_CPUPROFILE="+cpu, "INFER_ALLOCPROFILE="+allocs, "INFER_TRACE="+trace)
		c := start(t, env, t.TempDir(), filepath.Join(bin, name), "version")
		if err := c.wait(t); err != nil {
			t.Fatalf("%s version: %v\n%s", name, err, c.stderr)
		}
		return cpu, allocs, trace
	}

	cpu, allocs, trace := run("infer-pprof")
	for _, p := range []string{cpu, allocs} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// A profile is gzipped protocol buffers.
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s is not a profile: %v", filepath.Base(p), err)
		}
		if raw, err := io.ReadAll(zr); err != nil || len(raw) == 0 {
			t.Fatalf("%s: %d bytes, %v", filepath.Base(p), len(raw), err)
		}
	}
	if data, err := os.ReadFile(trace); err != nil || !bytes.HasPrefix(data, []byte("go 1.")) {
		t.Fatalf("the trace starts %.12q (%v), not with a Go trace header", data, err)
	}

	cpu, allocs, trace = run("infer-plain")
	for _, p := range []string{cpu, allocs, trace} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("an ordinary build wrote %s (%v)", filepath.Base(p), err)
		}
	}
}
