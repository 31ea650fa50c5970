package lock

import (
	"os"

	"github.com/ariadne-go/ariadne/internal/proc"
)

// processID names a process well enough for a waiter to decide whether it
// can see it: a pid means something only to a process in the same pid
// namespace of the same boot of the same machine.
type processID struct {
	host      string // host name, for messages and a cheap first match
	pid       int
	namespace string // "<boot id>/<pid namespace>"; "" when unknown
}

// currentProcess returns this process's identity. The namespace is known
// on Linux only (/proc); elsewhere it is empty, which disables the
// dead-process rule rather than risk matching a pid of another machine
// that happens to share the host name.
func currentProcess() processID {
	host, err := os.Hostname()
	if err != nil {
		host = ""
	}
	return processID{host: host, pid: os.Getpid(), namespace: pidNamespace()}
}

// pidNamespace returns "<boot id>/<pid namespace>" on Linux, "" elsewhere
// or when either part cannot be read. The boot id tells machines (and
// boots) apart even when host names collide; the namespace tells containers
// on one machine apart, which may share a host name but not their pids.
func pidNamespace() string {
	boot, ns := proc.BootID(), proc.Namespace()
	if boot == "" || ns == "" {
		return ""
	}
	return boot + "/" + ns
}

// sees reports whether p can check the liveness of info's holder: the lock
// names a process in p's own pid namespace, on p's host.
func (p processID) sees(info LockInfo) bool {
	return p.namespace != "" && info.PID > 0 && info.PIDNamespace == p.namespace && info.Host == p.host
}
