package netproxy

import "golang.org/x/sys/unix"

// newSessionKeyring makes the calling thread join a new anonymous session
// keyring. The call is made by hand: unix.KeyctlJoinSessionKeyring("")
// passes an empty name, not none, and joins (or makes) the keyring named
// "", which every sandbox would then share.
func newSessionKeyring() error {
	_, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
