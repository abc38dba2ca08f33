//go:build unix

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A home folder that another user can write in, or owns, is theirs to
// fill: they can put a config.yaml there that turns the sandbox off or
// starts an MCP server of theirs, forge trusted.json, or put a socket in
// the place of mcp.sock or browser.sock, which infer's other processes
// hand the bridge token to. infer refuses to load it and says the fix.
func TestLoadRefusesAHomeOthersCanWrite(t *testing.T) {
	for _, mode := range []os.FileMode{0o777, 0o1777, 0o775} {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, ConfigFile), []byte("agent:\n  mode: auto\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(home, mode); err != nil {
			t.Fatal(err)
		}
		_, err := Load(home, "")
		if err == nil {
			t.Errorf("mode %04o: a home others can write in was loaded", mode)
			continue
		}
		if !strings.Contains(err.Error(), "chmod 700") {
			t.Errorf("mode %04o: the error does not say the fix: %v", mode, err)
		}
	}
	home := t.TempDir()
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(home, ""); err != nil {
		t.Errorf("a home only its owner can write in: %v", err)
	}
}

// A home folder another user owns is refused too, whatever its mode.
func TestLoadRefusesAHomeOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("giving a folder to another user needs root")
	}
	home := t.TempDir()
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := Load(home, "")
	if err == nil || !strings.Contains(err.Error(), "another user") {
		t.Errorf("a home another user owns: %v", err)
	}
}
