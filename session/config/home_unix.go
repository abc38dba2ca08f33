//go:build unix

package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// CheckHome refuses a home folder that is not the person's alone to
// change: one another user owns, or one others can write in. Whoever can
// write there can replace config.yaml (turning the sandbox off, starting
// an MCP server of theirs), forge trusted.json, or put a socket where
// mcp.sock or browser.sock would be, which infer's other processes hand
// the bridge token to. infer makes its home 0700, but keeps the mode of
// one that exists (INFER_HOME pointed at a shared or pre-made folder). A
// home that does not exist yet is made later, private.
func CheckHome(home string) error {
	fi, err := os.Stat(home)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("infer's home %s: %w", DisplayPath(home), err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("infer's home %s is not a folder; set %s to a folder of your own", DisplayPath(home), HomeEnv)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if uid := int(st.Uid); uid != os.Getuid() && uid != 0 {
			return fmt.Errorf("infer's home %s belongs to another user (uid %d), who could change your settings and receive your bridge token; set %s to a folder of your own", DisplayPath(home), uid, HomeEnv)
		}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("other users can write in infer's home %s (mode %04o): they could change your settings and receive your bridge token; run `chmod 700 %s`", DisplayPath(home), perm, home)
	}
	return nil
}
