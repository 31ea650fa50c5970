package proc

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// TestGone: this process and its parent exist; a child that exited and was
// reaped does not; an invalid pid is never reported gone.
func TestGone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no liveness check on this platform")
	}
	if Gone(os.Getpid()) || Gone(os.Getppid()) {
		t.Fatal("a live process reported gone")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if !Gone(cmd.Process.Pid) {
		t.Errorf("exited child %d not reported gone", cmd.Process.Pid)
	}
	// Killed but not yet reaped: a zombie, which kill(2) still finds.
	z := exec.Command(os.Args[0], "-test.run=^$")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	z.Process.Kill()
	for i := 0; i < 200 && !Gone(z.Process.Pid); i++ {
		exec.Command("sleep", "0.01").Run()
	}
	if runtime.GOOS == "linux" && !Gone(z.Process.Pid) {
		t.Errorf("unreaped killed child %d not reported gone", z.Process.Pid)
	}
	z.Wait()
	if Gone(0) || Gone(-1) {
		t.Error("invalid pid reported gone")
	}
}

func TestNamespace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	if Namespace() == "" || BootID() == "" {
		t.Fatalf("namespace %q boot id %q", Namespace(), BootID())
	}
}
