package ariadne

import (
	"context"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/sparkengine"
)

// The engines a join or an update can run on (JoinRequest.Engine,
// UpdateOptions.Engine, config key engine).
const (
	// EngineDuckDB is embedded DuckDB, in this process (the default).
	EngineDuckDB = "duckdb"
	// EngineSpark is Apache Spark through Spark Connect (JoinRequest.
	// SparkRemote, config key sparkRemote): locating stays here, Spark
	// reads only the located files. See docs/spark-engine.md.
	EngineSpark = "spark"
)

// joinEngine resolves a join's engine over the Store's config: nil for
// embedded DuckDB, else the Store's Spark engine for the remote.
func (s *Store) joinEngine(ctx context.Context, eng, remote string) (fileindex.Engine, error) {
	e, err := s.engineFor(ctx, "join", eng, remote)
	if e == nil || err != nil {
		return nil, err
	}
	return e, nil
}

// engineFor resolves the engine of operation op (join, update) over the
// Store's config: nil for embedded DuckDB, else the Store's Spark engine
// for the remote.
func (s *Store) engineFor(ctx context.Context, op, eng, remote string) (*sparkengine.Engine, error) {
	if eng == "" {
		eng = s.opts.Config.Engine
	}
	if remote == "" {
		remote = s.opts.Config.SparkRemote
	}
	switch strings.ToLower(eng) {
	case "", EngineDuckDB:
		return nil, nil
	case EngineSpark:
		if remote == "" {
			return nil, aerr.Invalid("%s: the spark engine needs a Spark Connect URL (sc://host:port): set SparkRemote, --spark or the config key sparkRemote", op)
		}
		return s.sparkEngine(ctx, remote)
	}
	return nil, aerr.Invalid("%s: unknown engine %q (want %s or %s)", op, eng, EngineDuckDB, EngineSpark)
}

// sparkEngine returns the Store's engine for remote, connecting on first
// use; engines are closed with the Store.
func (s *Store) sparkEngine(ctx context.Context, remote string) (*sparkengine.Engine, error) {
	s.sparkMu.Lock()
	defer s.sparkMu.Unlock()
	if e, ok := s.spark[remote]; ok {
		return e, nil
	}
	e, err := sparkengine.New(ctx, remote, sparkengine.Options{})
	if err != nil {
		return nil, err
	}
	if s.spark == nil {
		s.spark = map[string]*sparkengine.Engine{}
	}
	s.spark[remote] = e
	return e, nil
}
