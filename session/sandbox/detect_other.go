//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"runtime"
)

func detect() *Sandbox {
	return Unavailable(errors.New("infer has no sandbox for " + runtime.GOOS))
}
