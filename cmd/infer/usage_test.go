package main

import (
	"strings"
	"testing"
)

// TestUnknownSubcommandOfAGroup: a mistyped subcommand of any command
// group is a usage error (exit 2) naming the word and the way out, as a
// mistyped top-level command is, so a script can tell a typo from success.
func TestUnknownSubcommandOfAGroup(t *testing.T) {
	t.Parallel()
	useDirs(t, freshHome(t), t.TempDir())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"conversations", "lst"}, `unknown command "lst" for "infer conversations"; did you mean "list"?`},
		{[]string{"conv", "lst"}, `did you mean "list"?`},
		{[]string{"permissions", "bogus"}, `unknown command "bogus" for "infer permissions"; use one of: list, revoke`},
		{[]string{"perms", "revok"}, `did you mean "revoke"?`},
		{[]string{"completion", "bogus"}, `unknown command "bogus" for "infer completion"; use one of: bash, fish, powershell, zsh`},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for "infer"; use one of: `},
	} {
		out, errOut, code := infer(t, tc.args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d", tc.args, code, exitUsage)
		}
		if !strings.HasPrefix(errOut, "infer: ") || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "Usage:") {
			t.Errorf("%q: stderr lacks %q:\n%s", tc.args, tc.want, errOut)
		}
		if out != "" {
			t.Errorf("%q: stdout %q", tc.args, out)
		}
	}
}

// TestGroupAlonePrintsHelp: a group with nothing after it shows its help
// and exits 0, as `infer` alone does without a terminal.
func TestGroupAlonePrintsHelp(t *testing.T) {
	t.Parallel()
	for _, group := range []string{"conversations", "permissions", "completion"} {
		out, errOut, code := infer(t, group)
		if code != exitOK || !strings.Contains(out, "Available Commands:") || errOut != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout:\n%s", group, code, errOut, out)
		}
	}
}

// TestHeadlessPortOutOfRange: a --port no socket can use is a usage error
// whether or not browser_use.yaml would start the bridge.
func TestHeadlessPortOutOfRange(t *testing.T) {
	t.Parallel()
	home, _ := hlProject(t)
	check := func(setup string) {
		t.Helper()
		for _, port := range []string{"70000", "-1"} {
			out, errOut, code := runHL(t, "", "--port", port, "hi")
			if code != exitUsage || out != "" || !strings.Contains(errOut, "infer: --port "+port+": use a number from 1 to 65535") {
				t.Errorf("%s, --port %s: exit %d, stdout %q, stderr:\n%s", setup, port, code, out, errOut)
			}
		}
	}
	check("no browser_use.yaml")
	withBridge(t, home, 0)
	check("bridge enabled")
}

// TestHeadlessPortZeroStillPicksAFreePort guards what --port 0 already
// meant: a free port, so the range check must let it through.
func TestHeadlessPortZeroStillPicksAFreePort(t *testing.T) {
	t.Parallel()
	home, _ := hlProject(t)
	withBridge(t, home, 0)
	out, errOut, code := runHL(t, "", "--port", "0", "--verbose", "hi")
	if code != exitOK {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
}

// TestServePortOutOfRange: `infer serve --port 70000` is a usage error
// (exit 2), as it is for `infer` and `infer headless`, not a failure to
// listen (exit 1).
func TestServePortOutOfRange(t *testing.T) {
	t.Parallel()
	useDirs(t, freshHome(t), t.TempDir())
	for _, port := range []string{"70000", "-1"} {
		_, errOut, code := infer(t, "serve", "--port", port)
		if code != exitUsage || !strings.Contains(errOut, "--port "+port+": use a number from 1 to 65535") {
			t.Errorf("--port %s: exit %d\n%s", port, code, errOut)
		}
	}
}

// TestHeadlessHelpNamesEveryInterruptingSignal: main cancels a run on
// SIGINT, SIGTERM and SIGHUP alike, and TestHangupStopsHeadlessAndKeeps…
// checks the 130 for the latter two; the help says so too.
func TestHeadlessHelpNamesEveryInterruptingSignal(t *testing.T) {
	t.Parallel()
	out, _, code := infer(t, "headless", "--help")
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), "130 interrupted (SIGINT, SIGTERM or SIGHUP, or stopped from the browser panel)") {
		t.Fatalf("exit %d; help:\n%s", code, out)
	}
}
