//go:build unix

package relay

import (
	"fmt"
	"os"
	"syscall"
)

// privateFolder checks that dir, where the socket lives, is this user's
// (or root's) and that no one else can write in it: whoever can write
// there can put a socket of their own in the holder's place, which guests
// would hand the token and every browser command to, or replace the
// holder's. infer makes its home 0700, but keeps the mode of one that
// exists (INFER_HOME pointed at a shared or pre-made folder).
func privateFolder(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := int(st.Uid); uid != os.Getuid() && uid != 0 {
		return fmt.Errorf("%s belongs to another user (uid %d), who could put a socket of their own in this infer's place; use a home folder of your own (INFER_HOME)", dir, uid)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("other users can write in %s (mode %04o) and could put a socket of their own in this infer's place; run `chmod 700 %s`", dir, perm, dir)
	}
	return nil
}
