package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/internal/syncbuf"
	"github.com/infer-workspace/infer/session/browser"
)

// parse resolves an extension-mode command line as infer-sim does,
// without starting the simulator.
func parse(args []string, getenv func(string) string, stderr io.Writer) (settings, error) {
	var got settings
	c := &cli{getenv: getenv, stdout: io.Discard, stderr: stderr}
	c.extension = func(_ context.Context, s settings) int { got = s; return 0 }
	root := c.rootCmd()
	root.SetArgs(args)
	root.SetOut(io.Discard)
	root.SetErr(stderr)
	_, err := root.ExecuteC()
	return got, err
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeBrowserUse(t *testing.T, body string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "browser_use.yaml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestTokenAndPortResolution(t *testing.T) {
	const yamlToken = "from-yaml-0123456789abcdefghijklmnopq"
	home := writeBrowserUse(t, "enabled: true\nbackend: extension\nextension:\n  port: 40001\n  token: "+yamlToken+"\n")
	empty := t.TempDir()
	badPort := writeBrowserUse(t, "extension:\n  port: 70000\n  token: "+yamlToken+"\n")
	unknownKey := writeBrowserUse(t, "extension:\n  prot: 40001\n  token: "+yamlToken+"\n")
	for _, tc := range []struct {
		name      string
		args      []string
		env       map[string]string
		wantURL   string
		wantToken string
		wantErr   string
	}{
		{name: "flags win", args: []string{"--port", "41000", "--token", "flag"}, env: map[string]string{"INFER_HOME": home, "INFER_TOKEN": "env"},
			wantURL: "ws://127.0.0.1:41000/ws", wantToken: "flag"},
		{name: "env token over yaml", env: map[string]string{"INFER_HOME": home, "INFER_TOKEN": "env"},
			wantURL: "ws://127.0.0.1:40001/ws", wantToken: "env"},
		{name: "yaml", env: map[string]string{"INFER_HOME": home},
			wantURL: "ws://127.0.0.1:40001/ws", wantToken: yamlToken},
		{name: "explicit url", args: []string{"--url", "ws://localhost:9/ws", "--token", "t"}, env: map[string]string{"INFER_HOME": empty},
			wantURL: "ws://localhost:9/ws", wantToken: "t"},
		{name: "default port", args: []string{"--token", "t"}, env: map[string]string{"INFER_HOME": empty},
			wantURL: "ws://127.0.0.1:52789/ws", wantToken: "t"},
		{name: "no token anywhere", env: map[string]string{"INFER_HOME": empty}, wantErr: "no token"},
		{name: "url and port", args: []string{"--url", "ws://x/ws", "--port", "1"}, wantErr: "use one"},
		{name: "port out of range", args: []string{"--port", "65536", "--token", "t"}, env: map[string]string{"INFER_HOME": empty}, wantErr: "--port 65536"},
		{name: "not a ws url", args: []string{"--url", "ftp://x", "--token", "t"}, wantErr: "not ws or wss"},
		{name: "yaml port out of range", env: map[string]string{"INFER_HOME": badPort}, wantErr: "browser_use.yaml:2: extension.port: 70000 is not a valid port; use a number from 1 to 65535"},
		{name: "yaml unknown key", env: map[string]string{"INFER_HOME": unknownKey}, wantErr: "browser_use.yaml:2: extension.prot"},
		{name: "yaml port, flag token", args: []string{"--token", "t"}, env: map[string]string{"INFER_HOME": home},
			wantURL: "ws://127.0.0.1:40001/ws", wantToken: "t"},
		{name: "stray word near a subcommand", args: []string{"rnu"}, wantErr: `unexpected arguments ["rnu"]; did you mean "run"?`},
		{name: "unknown flag", args: []string{"--prot", "1"}, wantErr: "unknown flag: --prot (see --help)"},
		{name: "stray argument", args: []string{"--token", "t", "extra"}, wantErr: "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parse(tc.args, envOf(tc.env), &bytes.Buffer{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %+v, %v; want an error containing %q", s, err, tc.wantErr)
				}
				return
			}
			if err != nil || s.url != tc.wantURL || s.token != tc.wantToken {
				t.Fatalf("got %+v, %v; want %s %s", s, err, tc.wantURL, tc.wantToken)
			}
		})
	}
}

func TestInvalidYAMLIsReported(t *testing.T) {
	t.Parallel()
	home := writeBrowserUse(t, "extension: [unclosed\n")
	_, err := parse(nil, envOf(map[string]string{"INFER_HOME": home}), &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "browser_use.yaml") {
		t.Fatalf("got %v, want an error naming the file", err)
	}
}

func TestRunConnectsAndAnswersCommands(t *testing.T) {
	t.Parallel()
	const secret = "tok-SECRET-4711"
	connected := make(chan struct{}, 1)
	srv, err := bridge.Listen(bridge.Options{Token: secret, OnStatus: func(st browser.Status) {
		if st.State == browser.Connected {
			select {
			case connected <- struct{}{}:
			default:
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(context.Background())
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	var stderr syncbuf.Buffer
	go func() {
		exit <- run(ctx, []string{"--port", strconv.Itoa(srv.Port()), "--token", secret}, envOf(nil), strings.NewReader(""), io.Discard, &stderr)
	}()
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		t.Fatal("infer-sim did not connect")
	}
	res, err := srv.Navigate(context.Background(), "http://demo.infer.localhost/")
	if err != nil || res.URL != "http://demo.infer.localhost/" || res.Title != "Tidewater Library" {
		t.Fatalf("Navigate through infer-sim: %+v %v; infer-sim log:\n%s", res, err, stderr.String())
	}
	cancel()
	if code := <-exit; code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), secret) {
		t.Errorf("the token was logged:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "connected to infer") {
		t.Errorf("no connection line in the log:\n%s", stderr.String())
	}
}

func TestFaultFlagsBecomeFaults(t *testing.T) {
	t.Parallel()
	s, err := parse([]string{"--token", "t", "--port", "1",
		"--latency", "250ms", "--drop-results", "0.1", "--duplicate-results", "0.2", "--late", "40s",
		"--malformed", "0.3", "--disconnect-after", "5", "--reconnect-storm", "4", "--wrong-token", "--seed", "42"},
		envOf(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	f := s.faults
	if f == nil || f.Latency != 250*time.Millisecond || f.DropResults != 0.1 || f.DuplicateResults != 0.2 ||
		f.Late != 40*time.Second || f.Malformed != 0.3 || f.DisconnectAfter != 5 || f.ReconnectStorm != 4 ||
		!f.WrongToken || f.Seed != 42 {
		t.Fatalf("faults %+v", f)
	}
	s, err = parse([]string{"--token", "t"}, envOf(map[string]string{"INFER_HOME": t.TempDir()}), &bytes.Buffer{})
	if err != nil || s.faults != nil || s.profile.String() != "contract" || s.browser.kind != "fake" {
		t.Fatalf("defaults: %+v %v", s, err)
	}
}

// TestFollowsRotatedTokenFromFile: with the token taken from
// browser_use.yaml, `infer init --rotate-token` (the file rewritten, the
// bridge given the new token, which drops the old one's connection) is
// followed: infer-sim reads the file again and reconnects with the new
// token, where it once retried the old one forever.
func TestFollowsRotatedTokenFromFile(t *testing.T) {
	t.Parallel()
	const (
		before = "before-rotation-0123456789abcdefghijklmnop"
		after  = "after-rotation-0123456789abcdefghijklmnopq"
	)
	states := make(chan browser.State, 64)
	srv, err := bridge.Listen(bridge.Options{Token: before, OnStatus: func(st browser.Status) {
		select {
		case states <- st.State:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(context.Background())
	defer srv.Close()
	file := func(token string) string {
		return "enabled: true\nbackend: extension\nextension:\n  port: " + strconv.Itoa(srv.Port()) + "\n  token: " + token + "\n"
	}
	home := writeBrowserUse(t, file(before))

	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	var stderr syncbuf.Buffer
	go func() {
		exit <- run(ctx, nil, envOf(map[string]string{"INFER_HOME": home}), strings.NewReader(""), io.Discard, &stderr)
	}()
	defer func() {
		cancel()
		if code := <-exit; code != 0 {
			t.Errorf("exit code %d; stderr:\n%s", code, stderr.String())
		}
	}()
	waitState := func(want browser.State, what string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case st := <-states:
				if st == want {
					return
				}
			case <-deadline:
				t.Fatalf("infer-sim %s; its log:\n%s", what, stderr.String())
			}
		}
	}
	waitState(browser.Connected, "did not connect with the token from the file")

	// What `infer init --rotate-token` and a running infer's token watch do.
	if err := os.WriteFile(filepath.Join(home, "browser_use.yaml"), []byte(file(after)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetToken(after); err != nil {
		t.Fatal(err)
	}
	waitState(browser.Disconnected, "was not dropped when the token changed")
	waitState(browser.Connected, "did not reconnect with the rotated token")
	res, err := srv.Navigate(context.Background(), "http://demo.infer.localhost/")
	if err != nil || res.Title != "Tidewater Library" {
		t.Fatalf("Navigate after the rotation: %+v %v; infer-sim log:\n%s", res, err, stderr.String())
	}
	if strings.Contains(stderr.String(), after) || strings.Contains(stderr.String(), before) {
		t.Errorf("a token was logged:\n%s", stderr.String())
	}
}
