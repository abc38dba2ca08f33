package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

const probeTimeout = 5 * time.Second

func detect() *Sandbox {
	// Only the system's own, never one found on PATH (see bwrapCandidates).
	path, err := firstTrusted("sandbox-exec", []string{"/usr/bin/sandbox-exec"})
	if err != nil {
		return Unavailable(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	if err := exec.CommandContext(ctx, path, "-p", "(version 1)(allow default)", "/usr/bin/true").Run(); err != nil {
		return Unavailable(fmt.Errorf("sandbox-exec does not run here: %v", err))
	}
	return &Sandbox{kind: Seatbelt, program: path}
}
