// Package proc answers the few questions Ariadne asks about processes of
// its own machine: does a process still exist, and which pid namespace
// (and boot) is a pid valid in. The lock package uses it to take over the
// locks of dead holders at once, the file index to remove the spill
// folders of dead runs.
package proc

import (
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
