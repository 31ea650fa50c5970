//go:build !unix

package proc

// Gone cannot tell on this platform; a holder is assumed alive and
// only the heartbeat rule applies.
func Gone(pid int) bool { return false }
