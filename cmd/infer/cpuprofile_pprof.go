//go:build pprof

package main

import (
	"fmt"
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
		if path := os.Getenv(CPUProfileEnv); path != "" {
			if f := createProfile(CPUProfileEnv, path); f != nil {
				if err := pprof.StartCPUProfile(f); err != nil {
					fmt.Fprintf(os.Stderr, "infer: %s: %v\n", CPUProfileEnv, err)
					f.Close()
				} else {
					stops = append(stops, func() {
						pprof.StopCPUProfile()
						closeProfile(CPUProfileEnv, f)
					})
				}
			}
		}
		if path := os.Getenv(TraceEnv); path != "" {
			if f := createProfile(TraceEnv, path); f != nil {
				if err := trace.Start(f); err != nil {
					fmt.Fprintf(os.Stderr, "infer: %s: %v\n", TraceEnv, err)
					f.Close()
				} else {
					stops = append(stops, func() {
						trace.Stop()
						closeProfile(TraceEnv, f)
					})
				}
			}
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
