// Command report is what `make test` says about the tests it cannot run
// here. `report needs` runs first: it finds which test packages ask
// testreq for each need and says which of those needs this machine lacks,
// so a person knows before the run what will skip (or, under CI, fail) and
// how to install it. `report state` prints a line that changes when one of
// those needs comes or goes, for make test to put in testreq.MachineEnv so
// that go test's cache does not replay a skip. `report summary` reads `go test -json` on stdin,
// prints what plain `go test` would (failures whole, one line a package)
// and ends with every skipped test grouped by why; it exits 1 when
// anything failed, so the pipe stays as honest as go test itself.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/infer-workspace/infer/internal/testreq"
	"github.com/infer-workspace/infer/session/sandbox"
)

func main() {
	if len(os.Args) != 2 {
		usage()
	}
	switch os.Args[1] {
	case "needs":
		users, err := needUsers(".")
		if err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		printNeeds(os.Stdout, users, lacking(), testreq.InCI())
	case "state":
		fmt.Println(state(lacking()))
	case "summary":
		failed, err := summarize(os.Stdin, os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		if failed {
			os.Exit(1)
		}
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: report needs | report state | report summary < go-test-json")
	os.Exit(2)
}

// lacking maps the name of each need this machine lacks to why. The
// sandbox is asked as the tests ask it, since bubblewrap may be installed
// and still unable to make its namespaces.
func lacking() map[string]string {
	out := map[string]string{}
	for _, n := range testreq.Needs {
		if n.Ident == testreq.Bubblewrap.Ident {
			if sb := sandbox.Detect(); !sb.Confines() && runtime.GOOS == "linux" {
				out[n.Name] = fmt.Sprint(sb.Problem())
			}
			continue
		}
		if n.Find() == "" {
			out[n.Name] = "not on PATH"
		}
	}
	return out
}

// state is one line naming each need and whether it is here, with the
// path of its program, so that installing, removing or moving one changes it.
func state(lack map[string]string) string {
	var parts []string
	for _, n := range testreq.Needs {
		if why, missing := lack[n.Name]; missing {
			parts = append(parts, n.Name+"=missing:"+why)
			continue
		}
		parts = append(parts, n.Name+"="+n.Find())
	}
	return strings.Join(parts, ";")
}

// printNeeds says, for each lacking need, which packages' tests skip (or
// fail, under CI) for want of it.
func printNeeds(w io.Writer, users map[string][]string, lack map[string]string, ci bool) {
	if len(lack) == 0 {
		var names []string
		for _, n := range testreq.Needs {
			names = append(names, n.Name)
		}
		fmt.Fprintf(w, "make test: %s are all here; no test skips for want of them.\n", strings.Join(names, ", "))
		return
	}
	verb := "skipped"
	if ci {
		verb = "FAILING under CI"
	}
	for _, n := range testreq.Needs {
		why, missing := lack[n.Name]
		if !missing {
			continue
		}
		pkgs := users[n.Ident]
		fmt.Fprintf(w, "make test: %s without %s (%s): the tests that need it in %s (install: %s)\n",
			verb, n.Name, why, listOr(pkgs, "no package"), n.Install)
	}
}
