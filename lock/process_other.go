//go:build !unix

package lock

// processGone cannot tell on this platform; a holder is assumed alive and
// only the heartbeat rule applies.
func processGone(pid int) bool { return false }
