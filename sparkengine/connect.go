package sparkengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/apache/spark-connect-go/spark/client/channel"
	// The Spark Connect client's package links in the protocol's generated
	// types, which register every spark.connect.* message in the global
	// protobuf registry; we build requests from those descriptors because
	// the client's DataFrame API cannot yet express a read of many paths
	// with a schema, or stream a result batch by batch.
	_ "github.com/apache/spark-connect-go/spark/client"
)

// The Spark Connect service's methods (spark/connect/base.proto).
const (
	methodExecutePlan    = "/spark.connect.SparkConnectService/ExecutePlan"
	methodReleaseSession = "/spark.connect.SparkConnectService/ReleaseSession"
)

// conn is one gRPC connection to a Spark Connect server.
type conn struct {
	remote string
	cc     *grpc.ClientConn
	md     metadata.MD
	user   string
	agent  string
}

func dial(ctx context.Context, remote string) (*conn, error) {
	b, err := channel.NewBuilder(remote)
	if err != nil {
		return nil, &Error{Kind: KindConnection, Remote: remote, Op: "parse remote", Err: err}
	}
	cc, err := b.Build(ctx)
	if err != nil {
		return nil, &Error{Kind: KindConnection, Remote: remote, Op: "connect", Err: err}
	}
	md := metadata.MD{}
	for k, v := range b.Headers() {
		md.Append(k, v)
	}
	return &conn{remote: remote, cc: cc, md: md, user: b.User(), agent: "ariadne-go"}, nil
}

func (c *conn) close() error { return c.cc.Close() }

// msg returns a new, empty message of type spark.connect.<name>.
func msg(name string) protoreflect.Message {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName("spark.connect." + name))
	if err != nil {
		// The types are linked in with the client; a missing one is a
		// build defect, not a runtime condition.
		panic(fmt.Sprintf("sparkengine: Spark Connect message %s not registered: %v", name, err))
	}
	return mt.New()
}

// set assigns v to the field at a dotted path of m, creating the messages
// on the way (oneof members included). v is a string, bool, int32, int64,
// []byte, []string or []protoreflect.Message (repeated), map[string]string
// or a protoreflect.Message.
func set(m protoreflect.Message, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		m = m.Mutable(field(m, p)).Message()
	}
	fd := field(m, parts[len(parts)-1])
	switch v := v.(type) {
	case string:
		m.Set(fd, protoreflect.ValueOfString(v))
	case bool:
		m.Set(fd, protoreflect.ValueOfBool(v))
	case int32:
		m.Set(fd, protoreflect.ValueOfInt32(v))
	case int64:
		m.Set(fd, protoreflect.ValueOfInt64(v))
	case []byte:
		m.Set(fd, protoreflect.ValueOfBytes(v))
	case []string:
		l := m.Mutable(fd).List()
		for _, s := range v {
			l.Append(protoreflect.ValueOfString(s))
		}
	case []protoreflect.Message:
		l := m.Mutable(fd).List()
		for _, x := range v {
			l.Append(protoreflect.ValueOfMessage(x))
		}
	case map[string]string:
		mp := m.Mutable(fd).Map()
		for k, s := range v {
			mp.Set(protoreflect.ValueOfString(k).MapKey(), protoreflect.ValueOfString(s))
		}
	case protoreflect.EnumNumber:
		m.Set(fd, protoreflect.ValueOfEnum(v))
	case protoreflect.Message:
		m.Set(fd, protoreflect.ValueOfMessage(v))
	default:
		panic(fmt.Sprintf("sparkengine: cannot set %s to %T", path, v))
	}
}

func field(m protoreflect.Message, name string) protoreflect.FieldDescriptor {
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic(fmt.Sprintf("sparkengine: %s has no field %s", m.Descriptor().FullName(), name))
	}
	return fd
}

// get returns the message at a dotted path of m, or nil when a field on
// the way is unset.
func get(m protoreflect.Message, path string) protoreflect.Message {
	for _, p := range strings.Split(path, ".") {
		fd := field(m, p)
		if !m.Has(fd) {
			return nil
		}
		m = m.Get(fd).Message()
	}
	return m
}

// session is one Spark Connect session: its temporary views are its own.
type session struct {
	c  *conn
	id string
}

func (c *conn) newSession() *session { return &session{c: c, id: uuid.NewString()} }

func (s *session) userContext() protoreflect.Message {
	u := msg("UserContext")
	set(u, "user_id", s.c.user)
	return u
}

func (s *session) ctx(ctx context.Context) context.Context {
	return metadata.NewOutgoingContext(ctx, s.c.md)
}

// execute starts a plan (a relation as its root, or a command) and returns
// the stream of its responses.
func (s *session) execute(ctx context.Context, op string, plan protoreflect.Message) (*stream, error) {
	req := msg("ExecutePlanRequest")
	set(req, "session_id", s.id)
	set(req, "user_context", s.userContext())
	set(req, "operation_id", uuid.NewString())
	set(req, "client_type", s.c.agent)
	set(req, "plan", plan)
	// After a lost connection, gRPC waits out a backoff before it dials
	// again and fails every call meanwhile: a retry should reach a server
	// that is back now, not in a minute.
	if s.c.cc.GetState() == connectivity.TransientFailure {
		s.c.cc.ResetConnectBackoff()
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		s.c.cc.WaitForStateChange(wctx, connectivity.TransientFailure)
		cancel()
	}
	cs, err := s.c.cc.NewStream(s.ctx(ctx), &grpc.StreamDesc{ServerStreams: true}, methodExecutePlan)
	if err != nil {
		return nil, rpcError(s.c.remote, op, err)
	}
	if err := cs.SendMsg(req.Interface()); err != nil {
		return nil, rpcError(s.c.remote, op, err)
	}
	if err := cs.CloseSend(); err != nil {
		return nil, rpcError(s.c.remote, op, err)
	}
	return &stream{s: s, op: op, cs: cs}, nil
}

// command runs a command plan to its end.
func (s *session) command(ctx context.Context, op string, cmd protoreflect.Message) error {
	plan := msg("Plan")
	set(plan, "command", cmd)
	st, err := s.execute(ctx, op, plan)
	if err != nil {
		return err
	}
	for {
		_, err := st.recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// query starts a relation plan.
func (s *session) query(ctx context.Context, op string, rel protoreflect.Message) (*stream, error) {
	plan := msg("Plan")
	set(plan, "root", rel)
	return s.execute(ctx, op, plan)
}

// release ends the session on the server (dropping its views). Best
// effort: a server that is gone has released it already.
func (s *session) release(ctx context.Context) {
	req := msg("ReleaseSessionRequest")
	set(req, "session_id", s.id)
	set(req, "user_context", s.userContext())
	set(req, "client_type", s.c.agent)
	resp := msg("ReleaseSessionResponse")
	_ = s.c.cc.Invoke(s.ctx(ctx), methodReleaseSession, req.Interface(), resp.Interface())
}

// stream is the response stream of one execution.
type stream struct {
	s  *session
	op string
	cs grpc.ClientStream
}

// recv returns the next response; io.EOF once the server ended the call
// with an OK status. (Spark 3.5 sends ResultComplete only to reattachable
// executions, which we do not request: a call ends OK only when the whole
// result was sent, and a lost connection ends it with an error status.)
func (st *stream) recv() (protoreflect.Message, error) {
	resp := msg("ExecutePlanResponse")
	if err := st.cs.RecvMsg(resp.Interface()); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, rpcError(st.s.c.remote, st.op, err)
	}
	return resp, nil
}
