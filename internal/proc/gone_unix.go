//go:build unix

package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// Gone reports whether no process with this pid exists: kill(pid, 0)
// fails with ESRCH, or the process is a zombie (killed, not yet reaped by
// its parent, which kill(2) still reports as present). Any doubt (EPERM: a
// process of another user exists) answers false.
func Gone(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// /proc/<pid>/stat is "pid (comm) S ..."; comm may hold spaces and
	// parentheses, so the state is the field after the last ')'.
	stat, rerr := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if rerr != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	return stat[i+2] == 'Z' || stat[i+2] == 'X'
}
