package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const stream = `{"Action":"start","Package":"example/a"}
{"Action":"run","Package":"example/a","Test":"TestOK"}
{"Action":"output","Package":"example/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"example/a","Test":"TestOK","Output":"    a_test.go:5: chatter of a passing test\n"}
{"Action":"pass","Package":"example/a","Test":"TestOK"}
{"Action":"run","Package":"example/a","Test":"TestSandbox"}
{"Action":"output","Package":"example/a","Test":"TestSandbox","Output":"=== RUN   TestSandbox\n"}
{"Action":"output","Package":"example/a","Test":"TestSandbox","Output":"    a_test.go:9: needs bubblewrap: bubblewrap is not installed (install: apt-get install -y bubblewrap)\n"}
{"Action":"output","Package":"example/a","Test":"TestSandbox","Output":"--- SKIP: TestSandbox (0.00s)\n"}
{"Action":"skip","Package":"example/a","Test":"TestSandbox"}
{"Action":"run","Package":"example/a","Test":"TestLong"}
{"Action":"output","Package":"example/a","Test":"TestLong","Output":"    a_test.go:20: runs for a minute\n"}
{"Action":"skip","Package":"example/a","Test":"TestLong"}
{"Action":"output","Package":"example/a","Output":"PASS\n"}
{"Action":"output","Package":"example/a","Output":"ok  \texample/a\t0.1s\n"}
{"Action":"pass","Package":"example/a"}
{"Action":"run","Package":"example/b","Test":"TestBroken"}
{"Action":"output","Package":"example/b","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}
{"Action":"output","Package":"example/b","Test":"TestBroken","Output":"    b_test.go:3: got 1, want 2\n"}
{"Action":"output","Package":"example/b","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.00s)\n"}
{"Action":"fail","Package":"example/b","Test":"TestBroken"}
{"Action":"run","Package":"example/b","Test":"TestHangs"}
{"Action":"output","Package":"example/b","Test":"TestHangs","Output":"    b_test.go:7: waiting for the sandbox\n"}
{"Action":"output","Package":"example/b","Output":"panic: test timed out after 10m0s\n"}
{"Action":"output","Package":"example/b","Test":"TestSandbox","Output":"    b_test.go:9: needs bubblewrap: bubblewrap is not installed (install: apt-get install -y bubblewrap)\n"}
{"Action":"skip","Package":"example/b","Test":"TestSandbox"}
{"Action":"output","Package":"example/b","Output":"FAIL\texample/b\t600.0s\n"}
{"Action":"fail","Package":"example/b"}
`

func TestSummaryShowsFailuresAndGroupsSkips(t *testing.T) {
	var out strings.Builder
	failed, err := summarize(strings.NewReader(stream), &out)
	if err != nil {
		t.Fatal(err)
	}
	if !failed {
		t.Error("a failing stream was summarised as passing")
	}
	got := out.String()
	for _, want := range []string{
		"ok  \texample/a\t0.1s\n",
		"    b_test.go:3: got 1, want 2\n--- FAIL: TestBroken",
		"panic: test timed out",
		// The test that was running when the package died says its last words.
		"b_test.go:7: waiting for the sandbox",
		"FAIL\texample/b",
		"skipped: 3 tests\n" +
			"  2: needs bubblewrap: bubblewrap is not installed (install: apt-get install -y bubblewrap)\n" +
			"      example/a: TestSandbox\n" +
			"      example/b: TestSandbox\n" +
			"  1: runs for a minute\n" +
			"      example/a: TestLong\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"chatter of a passing test", "=== RUN", "PASS\n"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("summary shows %q:\n%s", unwanted, got)
		}
	}
}

func TestSummaryOfAPassingRunPasses(t *testing.T) {
	var out strings.Builder
	in := `{"Action":"output","Package":"example/a","Output":"ok  \texample/a\t0.1s\n"}
{"Action":"pass","Package":"example/a"}
`
	failed, err := summarize(strings.NewReader(in), &out)
	if err != nil || failed {
		t.Fatalf("failed %v, err %v", failed, err)
	}
	if strings.Contains(out.String(), "skipped") {
		t.Errorf("a run without skips lists skips:\n%s", out.String())
	}
}

func TestSummaryCountsABuildFailure(t *testing.T) {
	var out strings.Builder
	in := `{"ImportPath":"example/c [example/c.test]","Action":"build-output","Output":"c_test.go:3:2: undefined: x\n"}
{"ImportPath":"example/c [example/c.test]","Action":"build-fail"}
{"Action":"output","Package":"example/c","Output":"FAIL\texample/c [build failed]\n"}
`
	failed, _ := summarize(strings.NewReader(in), &out)
	if !failed || !strings.Contains(out.String(), "undefined: x") {
		t.Fatalf("failed %v:\n%s", failed, out.String())
	}
}

func TestNeedUsersReadsTheTests(t *testing.T) {
	root := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a_test.go", `package a
import "github.com/infer-workspace/infer/internal/testreq"
func f(t testing.TB) { testreq.Program(t, testreq.Tmux); testreq.Lacking(t, testreq.Bubblewrap, "") }`)
	write("b/c/c_test.go", `package c
import tr "github.com/infer-workspace/infer/internal/testreq"
var n = tr.Bubblewrap`)
	// Not a test file, and a test file that names another testreq.
	write("d/d.go", `package d
import "github.com/infer-workspace/infer/internal/testreq"
var n = testreq.Chromium`)
	write("e/e_test.go", `package e
import testreq "example.com/other"
var n = testreq.Chromium`)
	got, err := needUsers(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"Program":    {"./a"},
		"Lacking":    {"./a"},
		"Tmux":       {"./a"},
		"Bubblewrap": {"./a", "./b/c"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("needUsers = %v, want %v", got, want)
	}
}

func TestNeedsSaysWhatSkipsAndHowToInstall(t *testing.T) {
	users := map[string][]string{"Bubblewrap": {"./cmd/infer", "./session/sandbox"}, "Tmux": {"./cmd/infer"}}
	lack := map[string]string{"bubblewrap": "bubblewrap is not installed"}
	var out strings.Builder
	printNeeds(&out, users, lack, false)
	want := "make test: skipped without bubblewrap (bubblewrap is not installed): the tests that need it in ./cmd/infer, ./session/sandbox (install: apt-get install -y bubblewrap)\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	out.Reset()
	printNeeds(&out, users, lack, true)
	if !strings.HasPrefix(out.String(), "make test: FAILING under CI without bubblewrap") {
		t.Fatalf("under CI: %q", out.String())
	}
	out.Reset()
	printNeeds(&out, users, nil, false)
	if !strings.Contains(out.String(), "all here") {
		t.Fatalf("nothing lacking: %q", out.String())
	}
}

func TestStateChangesWhenANeedGoesMissing(t *testing.T) {
	here := state(nil)
	gone := state(map[string]string{"tmux": "not on PATH"})
	if here == gone || !strings.Contains(gone, "tmux=missing:not on PATH") {
		t.Fatalf("state with tmux %q, without %q", here, gone)
	}
}
