//go:build pprof

package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
)

// A build with the "pprof" tag (go build -tags pprof ./cmd/infer) profiles
// itself when these name files: CPUProfileEnv gets a CPU profile of the
// whole run, AllocProfileEnv the allocations made over it, written at
// exit, and TraceEnv an execution trace (go tool trace), which shows where
// a run waits rather than where it computes. perf/'s benchmarks set them
// on the processes they run when asked for profiles (see
// docs/performance.md); unset, nothing is recorded.
const (
	CPUProfileEnv   = "INFER_CPUPROFILE"
	AllocProfileEnv = "INFER_ALLOCPROFILE"
	TraceEnv        = "INFER_TRACE"
)

func init() {
	startCPUProfile = func() func() {
		var stops []func()
		if stop := record(CPUProfileEnv, pprof.StartCPUProfile, pprof.StopCPUProfile); stop != nil {
			stops = append(stops, stop)
		}
		if stop := record(TraceEnv, trace.Start, trace.Stop); stop != nil {
			stops = append(stops, stop)
		}
		if path := os.Getenv(AllocProfileEnv); path != "" {
			// Every allocation is sampled, so the profile counts them all.
			runtime.MemProfileRate = 1
			stops = append(stops, func() {
				if f := createProfile(AllocProfileEnv, path); f != nil {
					if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
						fmt.Fprintf(os.Stderr, "infer: %s: %v\n", AllocProfileEnv, err)
					}
					closeProfile(AllocProfileEnv, f)
				}
			})
		}
		return func() {
			for _, stop := range stops {
				stop()
			}
		}
	}
}

// record starts a recording into the file env names, if it names one,
// and returns what ends it (nil when nothing was started).
func record(env string, start func(io.Writer) error, stop func()) func() {
	path := os.Getenv(env)
	if path == "" {
		return nil
	}
	f := createProfile(env, path)
	if f == nil {
		return nil
	}
	if err := start(f); err != nil {
		fmt.Fprintf(os.Stderr, "infer: %s: %v\n", env, err)
		f.Close()
		return nil
	}
	return func() {
		stop()
		closeProfile(env, f)
	}
}

func createProfile(env, path string) *os.File {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "infer: %s: %v\n", env, err)
		return nil
	}
	return f
}

func closeProfile(env string, f *os.File) {
	if err := f.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "infer: %s: %v\n", env, err)
	}
}
