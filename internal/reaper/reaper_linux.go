package reaper

import (
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const supported = true

// selfPath is this binary as the kernel knows it: still the one running
// when the file on disk was replaced or removed since.
func selfPath() (string, error) { return "/proc/self/exe", nil }

// decodeStatus turns the reaper's report back into a wait status.
func decodeStatus(s uint32) syscall.WaitStatus { return syscall.WaitStatus(s) }

// armParentDeath has the kernel send the reaper SIGTERM when infer dies,
// which it catches; SIGKILL would leave the tree behind.
func armParentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGTERM }

// termGrace is how long the tree gets to end after SIGTERM before the
// reaper kills what is left. It is shorter than the grace session/tools
// gives a stopped command's group (2 s) before killing the group, reaper
// included, so that the reaper has done its work by then.
const termGrace = time.Second

// serve is the reaper: statusFD is its status pipe, args the program and
// its argv.
func serve(statusFD int, args []string) int {
	status := os.NewFile(uintptr(statusFD), "status")
	syscall.CloseOnExec(statusFD)
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envMarker+"=") {
			env = append(env, kv)
		}
	}
	// Signals first: from here on a SIGTERM (infer died, or stopped the
	// command) ends the tree instead of just the reaper.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 126
	}
	if os.Getppid() == 1 {
		return 1 // infer died before the parent-death signal was armed
	}
	cmd := exec.Command(args[0])
	cmd.Args = args[1:]
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Should the reaper itself be killed outright, bash goes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.Stderr.WriteString("infer-reaper: " + err.Error() + "\n")
		return 127
	}
	// Only bash and what it starts hold the output now, so infer sees the
	// output end when they are done with it.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		unix.Dup2(int(null.Fd()), 1)
		unix.Dup2(int(null.Fd()), 2)
		null.Close()
	}
	bash := cmd.Process.Pid

	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return // ECHILD: nothing is left
			}
			if pid == bash {
				s := uint32(ws)
				status.Write([]byte{byte(s), byte(s >> 8), byte(s >> 16), byte(s >> 24), left()})
				status.Close()
			}
		}
	}()
	select {
	case <-reaped:
		return 0
	case <-term:
		endTree(reaped)
		return 1
	}
}

// left says whether any child is still running, reaping those that have
// ended. What bash left behind was made the reaper's before bash's end was
// reported, so nothing is missed.
func left() byte {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil:
			return 0 // ECHILD: none
		case pid == 0:
			return 1
		}
	}
}

// endTree asks every process below the reaper to stop, then kills what is
// still there after termGrace, until none is left.
func endTree(reaped <-chan struct{}) {
	signalTree(syscall.SIGTERM)
	deadline := time.Now().Add(termGrace)
	for time.Now().Before(deadline) {
		select {
		case <-reaped:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	// Killed processes may have forked in between; repeat until the tree
	// is empty (the reaping goroutine collects them).
	for range 100 {
		if signalTree(syscall.SIGKILL) == 0 {
			return
		}
		select {
		case <-reaped:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// signalTree sends sig to every live process descending from this one and
// says how many it found.
func signalTree(sig syscall.Signal) int {
	children := map[int][]int{}
	live := map[int]bool{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := stat(pid)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], pid)
		live[pid] = state != 'Z'
	}
	n := 0
	queue := []int{os.Getpid()}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			queue = append(queue, c)
			if live[c] {
				syscall.Kill(c, sig)
				n++
			}
		}
	}
	return n
}

// stat reads a process's parent and state from /proc/<pid>/stat.
func stat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name may hold spaces and parentheses; the fields after
	// its last ')' are "state ppid ...".
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}
