package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// probeTimeout bounds the trial run at start; bwrap normally takes a few
// milliseconds.
const probeTimeout = 5 * time.Second

func detect() *Sandbox {
	path, err := firstTrusted("bwrap", bwrapCandidates)
	if err != nil {
		return Unavailable(fmt.Errorf("bubblewrap is not installed where infer trusts it (%v): install the bubblewrap package (apt-get install bubblewrap)", err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	// The same namespaces every confined command uses, so that a system
	// where they cannot be made is found now, not at the first command.
	probe := exec.CommandContext(ctx, path, "--die-with-parent", "--unshare-pid", "--unshare-ipc",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--", "true")
	var stderr bytes.Buffer
	probe.Stderr = &stderr
	if err := probe.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return Unavailable(fmt.Errorf("bubblewrap cannot create its namespaces here (%s); user namespaces may be disabled", msg))
	}
	s := &Sandbox{kind: Bubblewrap, program: path}
	if out, err := exec.CommandContext(ctx, path, "--version").Output(); err == nil {
		s.version = strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap ")
	}
	return s
}
