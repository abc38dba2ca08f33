package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"
)

const probeTimeout = 5 * time.Second

func detect() *Sandbox {
	path, err := exec.LookPath("sandbox-exec")
	if err != nil {
		return Unavailable(errors.New("sandbox-exec is not on PATH"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	if err := exec.CommandContext(ctx, path, "-p", "(version 1)(allow default)", "/usr/bin/true").Run(); err != nil {
		return Unavailable(fmt.Errorf("sandbox-exec does not run here: %v", err))
	}
	return &Sandbox{kind: Seatbelt, program: path}
}
