package interop

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNotLoopbackOnly is matched by StartConnectServer's error when this
// process can reach a network interface other than loopback.
//
// Spark 3.5's Spark Connect server has no bind-address setting (the
// spark.connect.grpc.binding.address key arrived with Spark 4.0): it listens
// on every interface. The harness therefore runs it only inside a private
// network namespace whose sole interface is loopback (interop/run.sh runs the
// Go tests under `unshare --net`), where "every interface" is 127.0.0.1 and
// ::1.
var ErrNotLoopbackOnly = errors.New("interop: a network interface other than loopback is up")

// ConnectOptions configure StartConnectServer.
type ConnectOptions struct {
	// LogFile receives the server's standard output and error (required:
	// Spark logs are long, and the tail is what explains a failure).
	LogFile string
	// StartTimeout bounds the wait for the server's port to accept
	// connections (default DefaultConnectStartTimeout).
	StartTimeout time.Duration
	// Conf are extra Spark configuration entries (--conf key=value), e.g.
	// an event log for a benchmark's measurements.
	Conf map[string]string
}

// DefaultConnectStartTimeout bounds a Spark Connect server's start: the JVM
// and the SparkContext start in about 10 s on 2 cores; six times that leaves
// room for a loaded CI machine without letting a broken start hang a test.
const DefaultConnectStartTimeout = 60 * time.Second

// connectStopGrace is how long Stop waits after SIGTERM before SIGKILL: the
// JVM's shutdown hooks stop the SparkContext in a few seconds.
const connectStopGrace = 15 * time.Second

// ConnectServer is a running local Spark Connect server (Spark 3.5 from the
// installed pyspark, local[2], 1 GiB driver, Delta Lake on the classpath and
// as the session catalog). Stop it with Stop; a ConnectServer is not safe for
// concurrent Stop calls.
type ConnectServer struct {
	// Addr is the server's address, "127.0.0.1:<port>".
	Addr string
	// LogFile holds the server's output.
	LogFile string

	cmd  *exec.Cmd
	done chan struct{} // closed when cmd.Wait returns
	err  error         // cmd.Wait's result, valid after done
}

// Remote is the Spark Connect URL of the server ("sc://127.0.0.1:<port>").
func (s *ConnectServer) Remote() string { return "sc://" + s.Addr }

// LoopbackOnly reports whether every network interface that is up is a
// loopback interface, i.e. whether a server listening on all interfaces is
// reachable from this machine only.
func LoopbackOnly() (bool, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return false, err
	}
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
			return false, nil
		}
	}
	return true, nil
}

// freePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartConnectServer starts a Spark Connect server with spark-submit
// (org.apache.spark.sql.connect.service.SparkConnectServer, the class
// start-connect-server.sh runs) on a free port and returns once the port
// accepts TCP connections. The server runs in its own process group and is
// killed if ctx ends; on any error after the start it is stopped before
// returning. The caller must call Stop.
func (e *Env) StartConnectServer(ctx context.Context, opts ConnectOptions) (*ConnectServer, error) {
	ok, err := LoopbackOnly()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: Spark 3.5's Connect server binds every interface, so it runs only in a "+
			"network namespace with loopback alone (interop/run.sh runs the tests under `unshare --net`)", ErrNotLoopbackOnly)
	}
	if opts.LogFile == "" {
		return nil, errors.New("interop: ConnectOptions.LogFile is required")
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultConnectStartTimeout
	}
	var jars []string
	for _, j := range requiredJARs {
		p, err := e.JAR(j)
		if err != nil {
			return nil, err
		}
		jars = append(jars, p)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(opts.LogFile)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child keeps its own descriptor
	args := []string{
		"--master", "local[2]",
		"--driver-memory", "1g",
		"--conf", "spark.connect.grpc.binding.port=" + strconv.Itoa(port),
		"--conf", "spark.driver.host=127.0.0.1",
		"--conf", "spark.driver.bindAddress=127.0.0.1",
		"--conf", "spark.ui.enabled=false",
		"--conf", "spark.sql.shuffle.partitions=1",
		"--conf", "spark.sql.session.timeZone=UTC",
		"--conf", "spark.driver.extraJavaOptions=-Duser.timezone=UTC",
		"--conf", "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension",
		"--conf", "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog",
		"--conf", "spark.sql.warehouse.dir=" + filepath.Join(filepath.Dir(opts.LogFile), "spark-warehouse"),
	}
	for _, k := range slices.Sorted(maps.Keys(opts.Conf)) {
		args = append(args, "--conf", k+"="+opts.Conf[k])
	}
	args = append(args,
		"--jars", strings.Join(jars, ","),
		"--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
		"spark-internal",
	)
	// Not CommandContext: ctx's end is handled below by killing the whole
	// process group (spark-submit is a shell script that execs the JVM, and
	// the JVM may fork).
	cmd := exec.Command(filepath.Join(e.SparkHome, "bin", "spark-submit"), args...)
	cmd.Env = append(os.Environ(),
		"SPARK_HOME="+e.SparkHome,
		"SPARK_LOCAL_IP=127.0.0.1",
		"PYSPARK_PYTHON="+e.Python,
	)
	cmd.Dir = filepath.Dir(opts.LogFile)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("interop: starting spark-submit: %w", err)
	}
	s := &ConnectServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), LogFile: opts.LogFile, cmd: cmd, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.kill(syscall.SIGKILL)
		case <-s.done:
		}
	}()
	if err := s.waitReady(ctx, opts.StartTimeout); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w\n--- %s (tail) ---\n%s", err, opts.LogFile, s.logTail())
	}
	return s, nil
}

// waitReady polls the port until it accepts a connection, the server exits,
// the timeout passes or ctx ends.
func (s *ConnectServer) waitReady(ctx context.Context, timeout time.Duration) error {
	const poll = 250 * time.Millisecond
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		c, err := net.DialTimeout("tcp", s.Addr, poll)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("interop: Spark Connect server exited before listening: %v", s.err)
		case <-deadline.C:
			return fmt.Errorf("interop: Spark Connect server not listening on %s after %v", s.Addr, timeout)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (s *ConnectServer) kill(sig syscall.Signal) {
	// A negative pid signals the whole process group.
	_ = syscall.Kill(-s.cmd.Process.Pid, sig)
}

// Stop stops the server: SIGTERM to its process group, then SIGKILL if it
// has not exited within connectStopGrace. It returns once the process has
// exited (bounded by the grace period plus the kill). Calling Stop on a server
// that already exited is a no-op.
func (s *ConnectServer) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.kill(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(connectStopGrace):
		s.kill(syscall.SIGKILL)
		<-s.done
	}
}

// logTail returns the last lines of the server's log.
func (s *ConnectServer) logTail() string {
	data, err := os.ReadFile(s.LogFile)
	if err != nil {
		return err.Error()
	}
	return tail(string(data), stderrTailLines)
}
