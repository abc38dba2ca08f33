package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const goodToken = "Zk9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWpr"

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // WriteFile's mode is masked by the umask
		t.Fatal(err)
	}
}

func TestLoadBrowserUseDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), BrowserUseFile)
	writeFile(t, path, "enabled: true\nextension:\n  token: "+goodToken+"\n", 0o600)
	b, warnings, err := LoadBrowserUse(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	want := BrowserUse{Enabled: true, Backend: "extension", Extension: ExtensionConfig{Port: 52789, Token: goodToken, CommandTimeout: Duration(30 * time.Second), ConnectWait: Duration(20 * time.Second)}}
	if b != want {
		t.Errorf("got %+v, want %+v", b, want)
	}
	if b.WSURL() != "ws://127.0.0.1:52789/ws" {
		t.Errorf("WSURL = %q", b.WSURL())
	}
}

func TestLoadBrowserUseErrors(t *testing.T) {
	base := func(ext string) string {
		return "enabled: true\nbackend: extension\nextension:\n" + ext
	}
	tok := "  token: " + goodToken + "\n"
	cases := []struct {
		name, yaml string
		// want are substrings of the error: the key, the problem, the fix.
		want []string
	}{
		{"port too big", base(tok + "  port: 70000\n"), []string{":5: extension.port: 70000 is not a valid port", "from 1 to 65535 (default 52789)"}},
		{"port zero", base(tok + "  port: 0\n"), []string{"extension.port: 0 is not a valid port"}},
		{"port negative", base(tok + "  port: -1\n"), []string{"extension.port: -1 is not a valid port"}},
		{"port text", base(tok + "  port: abc\n"), []string{":5: extension.port: expected a whole number, found text"}},
		{"port list", base(tok + "  port: [1]\n"), []string{"extension.port: expected a whole number, found a list"}},
		{"port fraction", base(tok + "  port: 4123.5\n"), []string{":5: extension.port: expected a whole number, found \"4123.5\""}},
		{"token short", base("  token: abc123\n"), []string{"extension.token: is too short (6 characters; at least 32)", "infer init --rotate-token"}},
		{"token missing", base("  port: 52789\n"), []string{"extension.token: is missing", "infer init --rotate-token"}},
		{"token spaces", base("  token: \"" + goodToken + " x\"\n"), []string{"extension.token: contains spaces", "infer init --rotate-token"}},
		{"backend", "enabled: true\nbackend: playwright\nextension:\n" + tok, []string{":2: backend: \"playwright\" is not a known backend", `use "extension"`}},
		{"timeout short", base(tok + "  command_timeout: 500ms\n"), []string{"extension.command_timeout: 500ms is out of range", "from 1s to 10m (default 30s)"}},
		{"timeout long", base(tok + "  command_timeout: 11m\n"), []string{"extension.command_timeout: 11m is out of range"}},
		{"timeout unitless", base(tok + "  command_timeout: 30\n"), []string{"extension.command_timeout: \"30\" has no unit", "30s"}},
		{"connect wait negative", base(tok + "  connect_wait: -1s\n"), []string{"extension.connect_wait: -1s is out of range", "from 0s (fail at once) to 10m (default 20s)"}},
		{"connect wait long", base(tok + "  connect_wait: 11m\n"), []string{"extension.connect_wait: 11m is out of range"}},
		{"timeout garbage", base(tok + "  command_timeout: soon\n"), []string{"extension.command_timeout: \"soon\" is not a duration"}},
		{"typo nested", base(tok + "  prot: 1234\n"), []string{":5: extension.prot: unknown key", `did you mean "port"?`}},
		{"typo top", "enable: true\nextension:\n" + tok, []string{":1: enable: unknown key", `did you mean "enabled"?`}},
		{"stranger key", base(tok) + "colour: blue\n", []string{"colour: unknown key", "remove it or use one of: backend, enabled, extension"}},
		{"bool text", "enabled: maybe\nextension:\n" + tok, []string{":1: enabled: expected true or false, found text"}},
		{"extension scalar", "enabled: true\nextension: 5\n", []string{":2: extension: expected nested keys, found \"5\""}},
		{"duplicate", base(tok + "  port: 1\n  port: 2\n"), []string{":6: extension.port: set twice (first on line 5)", "keep only one"}},
		{"syntax", "enabled: true\nextension:\n  port: 1\n token: x\n", []string{"fix the YAML syntax"}},
		{"list at top", "- a\n- b\n", []string{"the file must be a mapping of keys"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), BrowserUseFile)
			writeFile(t, path, tc.yaml, 0o600)
			_, _, err := LoadBrowserUse(path)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, DisplayPath(path)) {
				t.Errorf("error does not start with the file: %s", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, goodToken) {
				t.Errorf("error reveals the token: %s", msg)
			}
		})
	}
}

func TestLoadBrowserUseReportsAllProblems(t *testing.T) {
	path := filepath.Join(t.TempDir(), BrowserUseFile)
	writeFile(t, path, "enabled: true\nbackend: x\nextension:\n  port: 0\n  token: short\n", 0o600)
	_, _, err := LoadBrowserUse(path)
	if err == nil {
		t.Fatal("no error")
	}
	for _, key := range []string{"backend:", "extension.port:", "extension.token:"} {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("%q missing from %s", key, err)
		}
	}
}

func TestLoadBrowserUseDisabledNeedsNoToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), BrowserUseFile)
	writeFile(t, path, "enabled: false\n", 0o600)
	b, _, err := LoadBrowserUse(path)
	if err != nil || b.Enabled || b.Extension.Port != DefaultPort {
		t.Fatalf("got %+v, %v", b, err)
	}
}

func TestLoadBrowserUseMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), BrowserUseFile)
	_, _, err := LoadBrowserUse(path)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v; want fs.ErrNotExist", err)
	}
	if !strings.Contains(err.Error(), "run `infer init`") {
		t.Errorf("error does not say to run infer init: %v", err)
	}
}

func TestLoadBrowserUsePermissionWarning(t *testing.T) {
	path := filepath.Join(t.TempDir(), BrowserUseFile)
	writeFile(t, path, "extension:\n  token: "+goodToken+"\n", 0o644)
	_, warnings, err := LoadBrowserUse(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "chmod 600") || !strings.Contains(warnings[0], "0644") {
		t.Errorf("warnings = %q", warnings)
	}
	if strings.Contains(strings.Join(warnings, ""), goodToken) {
		t.Error("warning reveals the token")
	}

	// Without a token there is nothing to protect.
	writeFile(t, path, "enabled: false\n", 0o644)
	if _, warnings, _ := LoadBrowserUse(path); len(warnings) != 0 {
		t.Errorf("warnings without a token: %q", warnings)
	}
}

func TestWriteBrowserUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home")
	path := filepath.Join(dir, BrowserUseFile)
	b := NewBrowserUse(6000)
	if err := writeBrowserUse(path, b); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v, %v", fi, err)
	}
	di, err := os.Stat(dir)
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode: %v, %v", di, err)
	}
	got, warnings, err := LoadBrowserUse(path)
	if err != nil || got != b || len(warnings) != 0 {
		t.Fatalf("round trip: %+v, %v, %v; want %+v", got, warnings, err, b)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "# Shared secret") {
		t.Errorf("written file has no comments:\n%s", data)
	}
	assertNoTempFiles(t, dir)

	// Replacing keeps the mode even when the existing file was looser.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	b.Extension.Port = 6001
	if err := writeBrowserUse(path, b); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after replace = %v", fi.Mode())
	}
}

func TestEncodeBrowserUseRefusesInvalid(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, BrowserUseFile)
	b := NewBrowserUse(0)
	b.Extension.Port = 70000
	if err := writeBrowserUse(path, b); err == nil || !strings.Contains(err.Error(), "extension.port") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an invalid file was written: %v", err)
	}
	assertNoTempFiles(t, dir)
}

func TestCreateBrowserUseNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, BrowserUseFile)
	first := NewBrowserUse(0)
	if err := CreateBrowserUse(path, first); err != nil {
		t.Fatal(err)
	}
	if err := CreateBrowserUse(path, NewBrowserUse(0)); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v; want fs.ErrExist", err)
	}
	got, _, err := LoadBrowserUse(path)
	if err != nil || got.Extension.Token != first.Extension.Token {
		t.Fatalf("the first token did not survive: %v", err)
	}
	assertNoTempFiles(t, dir)
}

func TestRotateToken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, BrowserUseFile)
	writeFile(t, path, `# my own notes
enabled: true
backend: extension
extension:
  port: 6123 # picked by hand
  # old token below
  token: short
  command_timeout: 45s
`, 0o644)
	fresh := NewToken()
	b, err := RotateToken(path, fresh)
	if err != nil {
		t.Fatal(err)
	}
	want := BrowserUse{Enabled: true, Backend: "extension", Extension: ExtensionConfig{Port: 6123, Token: fresh, CommandTimeout: Duration(45 * time.Second), ConnectWait: Duration(20 * time.Second)}}
	if b != want {
		t.Fatalf("got %+v, want %+v", b, want)
	}
	loaded, _, err := LoadBrowserUse(path)
	if err != nil || loaded != want {
		t.Fatalf("reloaded %+v, %v", loaded, err)
	}
	data, _ := os.ReadFile(path)
	for _, c := range []string{"# my own notes", "# picked by hand", "# old token below"} {
		if !strings.Contains(string(data), c) {
			t.Errorf("comment %q lost:\n%s", c, data)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after rotate = %v", fi.Mode())
	}
	assertNoTempFiles(t, dir)
}

func TestRotateTokenKeepsInvalidFileUntouched(t *testing.T) {
	path := filepath.Join(t.TempDir(), BrowserUseFile)
	content := "extension:\n  port: 99999\n  token: short\n"
	writeFile(t, path, content, 0o600)
	if _, err := RotateToken(path, NewToken()); err == nil || !strings.Contains(err.Error(), "extension.port") {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != content {
		t.Errorf("file changed:\n%s", data)
	}
}

func TestRotateTokenAddsMissingSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), BrowserUseFile)
	writeFile(t, path, "enabled: true\n", 0o600)
	fresh := NewToken()
	b, err := RotateToken(path, fresh)
	if err != nil || b.Extension.Token != fresh {
		t.Fatalf("got %+v, %v", b, err)
	}
}

func TestBrowserUseStringMasksToken(t *testing.T) {
	b := NewBrowserUse(0)
	for _, s := range []string{b.String(), fmt.Sprintf("%v", b), fmt.Sprintf("%+v", b), fmt.Sprintf("%#v", b)} {
		if strings.Contains(s, b.Extension.Token) {
			t.Errorf("token leaked: %s", s)
		}
	}
}

func TestNewToken(t *testing.T) {
	a, b := NewToken(), NewToken()
	if a == b {
		t.Fatal("two tokens are equal")
	}
	for _, tok := range []string{a, b} {
		if len(tok) != 43 {
			t.Errorf("len(%q) = %d, want 43", tok, len(tok))
		}
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || len(raw) != 32 {
			t.Errorf("%q is not 32 bytes of base64url: %v", tok, err)
		}
	}
}

func TestMaskToken(t *testing.T) {
	if got := MaskToken("abcdEFGHijklMNOPqrst"); got != "abcd…qrst" {
		t.Errorf("MaskToken = %q", got)
	}
	if got := MaskToken("short"); got != "****" {
		t.Errorf("MaskToken(short) = %q", got)
	}
	if got := MaskToken(""); got != "****" {
		t.Errorf("MaskToken(\"\") = %q", got)
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second:              "30s",
		2 * time.Minute:               "2m",
		time.Hour:                     "1h",
		90 * time.Minute:              "1h30m",
		1500 * time.Millisecond:       "1.5s",
		time.Hour + 5*time.Second:     "1h0m5s",
		2*time.Minute + 3*time.Second: "2m3s",
	} {
		if got := Duration(d).String(); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
		if parsed, err := time.ParseDuration(want); err != nil || parsed != d {
			t.Errorf("%q does not parse back to %v", want, d)
		}
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// TestConnectWaitZeroFailsAtOnce: 0s is a setting of its own (no wait at
// all), not an absent key taking the default.
func TestConnectWaitZeroFailsAtOnce(t *testing.T) {
	b, err := ParseBrowserUse([]byte("enabled: true\nextension:\n  token: "+goodToken+"\n  connect_wait: 0s\n"), "browser_use.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if b.Extension.ConnectWait != 0 {
		t.Errorf("connect_wait = %s, want 0s", b.Extension.ConnectWait)
	}
	data, err := EncodeBrowserUse(NewBrowserUse(0))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "connect_wait: 20s") || !strings.Contains(string(data), "How long a browser call waits") {
		t.Errorf("infer init's file has no commented connect_wait:\n%s", data)
	}
}

// writeBrowserUse writes b to path as infer init would, replacing any file
// there.
func writeBrowserUse(path string, b BrowserUse) error {
	data, err := EncodeBrowserUse(b)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, data, 0o600)
}
