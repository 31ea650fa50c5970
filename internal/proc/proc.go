// Package proc answers the few questions Ariadne asks about processes of
// its own machine: does a process still exist, and which pid namespace
// (and boot) is a pid valid in. The lock package uses it to take over the
// locks of dead holders at once, the file index to remove the spill
// folders of dead runs.
package proc

import (
	"fmt"
	"os"
	"strings"
)

// Namespace returns this process's pid namespace as the kernel names it
// ("pid:[4026531836]") on Linux, "" elsewhere. Processes in different
// namespaces (containers) cannot see each other's pids.
func Namespace() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return ns
}

// BootID returns the kernel's id of the current boot on Linux, "" elsewhere:
// it tells machines apart when host names collide, and boots of one machine.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// SpillPattern is the os.MkdirTemp pattern of a spill folder of kind
// ("update", "rowindex", "prepare"): ariadne-<kind>-p<pid>n<namespace
// inode>-*. The name records the process, so that a later run removes the
// folder once that process is gone (fileindex's sweep of $TMPDIR).
func SpillPattern(kind string) string {
	return fmt.Sprintf("ariadne-%s-p%dn%s-*", kind, os.Getpid(), NamespaceInode())
}

// NamespaceInode returns the inode number of this process's pid namespace
// ("4026531836" of "pid:[4026531836]"), "0" when unknown.
func NamespaceInode() string {
	ns := Namespace()
	if i, j := strings.IndexByte(ns, '['), strings.IndexByte(ns, ']'); i >= 0 && j > i+1 {
		return ns[i+1 : j]
	}
	return "0"
}
