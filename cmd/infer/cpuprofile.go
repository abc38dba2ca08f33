package main

// startCPUProfile begins a CPU profile of the whole process and returns
// what ends it. Ordinary builds have none: the hook exists only in a build
// with the "pprof" tag (cpuprofile_pprof.go), a developer's tool for
// finding where a run spends its time, so that an installed infer never
// writes a profile because of its environment.
var startCPUProfile = func() (stop func()) { return func() {} }
