// Package config owns Ariadne's tunables (spec §7): their defaults, the
// fallback rules for invalid values, and the layering of their sources —
// built-in defaults, then a config file, then environment variables, then
// per-command settings (`--set key=value`), each overriding the one before.
//
// Keys are the Spark library's names without the "spark.ariadne." prefix
// (which is accepted too): largeIndexLimit, stagingConsolidationThreshold,
// indexRepartitionCount, repartitionDataFiles, debug, lockTimeout,
// lockRetryInterval, lockMaxWait, lockRefreshInterval, autoCompactThreshold,
// autoBloomFpr; and our own rowIndexCacheBytes, rowIndexPageCacheBytes, rowIndexResidentBytes, rowIndexShapeBytes, rowIndexVerifyKeys, engine, sparkRemote. The environment variable for a key is ARIADNE_ followed by
// the key in upper snake case (ARIADNE_LARGE_INDEX_LIMIT).
//
// A Config is a plain value: no global state. Callers resolve one per
// command or query and pass it down.
package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Config holds every tunable with its resolved value.
type Config struct {
	// LargeIndexLimit is L: a (file, column) value set with at least this
	// many distinct values goes to the large-index table (§3.8, §3.10).
	LargeIndexLimit int64
	// StagingConsolidationThreshold is the number of staged batches between
	// consolidations (§5.3.3).
	StagingConsolidationThreshold int
	// IndexRepartitionCount, when > 0, bounds the parallelism of index-side
	// work (Spark's repartition count; §12 item 9). 0 = unset.
	IndexRepartitionCount int
	// RepartitionDataFiles applies IndexRepartitionCount to data-file reads.
	RepartitionDataFiles bool
	// Debug enables verbose join diagnostics.
	Debug bool
	// LockTimeout: a lock not refreshed for longer is stale (§2.6).
	LockTimeout time.Duration
	// LockRetryInterval is the base of the exponential lock retry sleep.
	LockRetryInterval time.Duration
	// LockMaxWait bounds the wait for a held lock; ≤ 0 fails at the first
	// contention check (§9 item 34).
	LockMaxWait time.Duration
	// LockRefreshInterval: the update lock is refreshed every this many
	// batches (≤ 1: every batch).
	LockRefreshInterval int
	// AutoCompactThreshold, when set (HasAutoCompact), compacts at a
	// consolidation once this many batches ran since the last compaction.
	AutoCompactThreshold int
	HasAutoCompact       bool
	// AutoBloomFPR is the false-positive rate of auto-bloom filters.
	AutoBloomFPR float64
	// RowIndexCacheBytes is a row index handle's metadata and index cache
	// budget (0: sized to each row index version, rowindex.AutoCacheBytes).
	// Ours, not the Spark library's.
	RowIndexCacheBytes int64
	// RowIndexPageCacheBytes is a row index handle's decoded data-page
	// cache budget (0: the rowindex default; negative: no page cache).
	RowIndexPageCacheBytes int64
	// RowIndexResidentBytes bounds the fragment row groups a warmed row
	// index handle keeps decoded for point lookups (0: sized to each row
	// index version, rowindex.AutoResidentBytes; negative: none).
	RowIndexResidentBytes int64
	// RowIndexShapeBytes bounds the page shapes a warmed row index handle
	// learns by reading every data page that lookups may read in parts once
	// (0: rowindex.DefaultShapeBytes, pages read only of files on local
	// stores; negative: none; rowindex.Options.ShapeBytes).
	RowIndexShapeBytes int64
	// RowIndexVerifyKeys makes row index lookups read the key column of
	// every row they return and check it still holds the key
	// (rowindex.Options.VerifyKeys; false: the key's values come from the
	// index).
	RowIndexVerifyKeys bool
	// Engine is the engine that reads located files and joins: "duckdb"
	// (embedded, the default) or "spark" (Spark Connect at SparkRemote).
	// Ours, not the Spark library's.
	Engine string
	// SparkRemote is the Spark Connect URL (sc://host:port) used when
	// Engine is "spark".
	SparkRemote string
}

// Defaults returns the documented defaults of §7.
func Defaults() Config {
	return Config{
		LargeIndexLimit:               500000,
		StagingConsolidationThreshold: 50,
		LockTimeout:                   1800 * time.Second,
		LockRetryInterval:             60 * time.Second,
		LockMaxWait:                   3600 * time.Second,
		LockRefreshInterval:           1,
		AutoBloomFPR:                  0.01,
		Engine:                        "duckdb",
	}
}

// Keys lists the known keys in documentation order.
var Keys = []string{
	"largeIndexLimit", "stagingConsolidationThreshold", "indexRepartitionCount", "repartitionDataFiles",
	"debug", "lockTimeout", "lockRetryInterval", "lockMaxWait", "lockRefreshInterval",
	"autoCompactThreshold", "autoBloomFpr", "rowIndexCacheBytes", "rowIndexPageCacheBytes",
	"rowIndexResidentBytes", "rowIndexShapeBytes", "rowIndexVerifyKeys", "engine", "sparkRemote",
}

// UnknownKeyError reports a key that is not one of Keys.
type UnknownKeyError struct{ Key string }

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("config: unknown key %q (known: %s)", e.Key, strings.Join(Keys, ", "))
}

// canonicalKey strips the Spark prefix and checks the key.
func canonicalKey(k string) (string, error) {
	k = strings.TrimPrefix(strings.TrimSpace(k), "spark.ariadne.")
	if !slices.Contains(Keys, k) {
		return "", &UnknownKeyError{Key: k}
	}
	return k, nil
}

// Set applies one key=value with the fallback rules of §7: an invalid value
// keeps the default for that key and returns a warning (never an error);
// an unknown key is an error.
func (c *Config) Set(key, value string) (warning string, err error) {
	k, err := canonicalKey(key)
	if err != nil {
		return "", err
	}
	d := Defaults()
	v := strings.TrimSpace(value)
	posInt := func(def int64) (int64, bool) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return def, false
		}
		return n, true
	}
	anyInt := func(def int64) (int64, bool) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return def, false
		}
		return n, true
	}
	boolean := func() (bool, bool) {
		switch strings.ToLower(v) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
		return false, false
	}
	ok := true
	switch k {
	case "largeIndexLimit":
		c.LargeIndexLimit, ok = posInt(d.LargeIndexLimit)
	case "stagingConsolidationThreshold":
		var n int64
		n, ok = posInt(int64(d.StagingConsolidationThreshold))
		c.StagingConsolidationThreshold = int(n)
	case "indexRepartitionCount":
		var n int64
		n, ok = posInt(0)
		c.IndexRepartitionCount = int(n)
	case "repartitionDataFiles":
		c.RepartitionDataFiles, ok = boolean()
	case "debug":
		c.Debug, ok = boolean()
	case "lockTimeout":
		var n int64
		n, ok = posInt(int64(d.LockTimeout / time.Second))
		c.LockTimeout = time.Duration(n) * time.Second
	case "lockRetryInterval":
		var n int64
		n, ok = posInt(int64(d.LockRetryInterval / time.Second))
		c.LockRetryInterval = time.Duration(n) * time.Second
	case "lockMaxWait":
		var n int64
		n, ok = anyInt(int64(d.LockMaxWait / time.Second))
		c.LockMaxWait = time.Duration(n) * time.Second
	case "lockRefreshInterval":
		var n int64
		n, ok = anyInt(int64(d.LockRefreshInterval))
		c.LockRefreshInterval = int(n)
	case "autoCompactThreshold":
		var n int64
		n, ok = anyInt(0)
		c.AutoCompactThreshold, c.HasAutoCompact = int(n), ok
	case "rowIndexCacheBytes":
		c.RowIndexCacheBytes, ok = posInt(0)
	case "rowIndexPageCacheBytes":
		c.RowIndexPageCacheBytes, ok = anyInt(0)
	case "rowIndexResidentBytes":
		c.RowIndexResidentBytes, ok = anyInt(0)
	case "rowIndexShapeBytes":
		c.RowIndexShapeBytes, ok = anyInt(0)
	case "rowIndexVerifyKeys":
		c.RowIndexVerifyKeys, ok = boolean()
	case "engine":
		switch strings.ToLower(v) {
		case "duckdb", "spark":
			c.Engine = strings.ToLower(v)
		default:
			c.Engine, ok = d.Engine, false
		}
	case "sparkRemote":
		if strings.HasPrefix(v, "sc://") {
			c.SparkRemote = v
		} else {
			c.SparkRemote, ok = d.SparkRemote, false
		}
	case "autoBloomFpr":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f < 1) {
			c.AutoBloomFPR, ok = d.AutoBloomFPR, false
		} else {
			c.AutoBloomFPR = f
		}
	}
	if !ok {
		return fmt.Sprintf("config: invalid value %q for %s; using the default", value, k), nil
	}
	return "", nil
}

// EnvName returns the environment variable that sets key.
func EnvName(key string) string {
	var b strings.Builder
	b.WriteString("ARIADNE_")
	for i, r := range key {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// Sources are the inputs to Resolve, lowest precedence first.
type Sources struct {
	// File is a config file path ("" = none). JSON object of key → value
	// (strings, numbers or booleans), or lines of key=value (# comments).
	File string
	// Env looks up environment variables (os.LookupEnv in production; nil
	// = no environment).
	Env func(string) (string, bool)
	// Set are key=value pairs from the command line, applied last.
	Set []string
}

// Resolve layers defaults, file, environment and settings. Warnings report
// invalid values that fell back to defaults.
func Resolve(src Sources) (Config, []string, error) {
	c := Defaults()
	var warnings []string
	apply := func(k, v string) error {
		w, err := c.Set(k, v)
		if err != nil {
			return err
		}
		if w != "" {
			warnings = append(warnings, w)
		}
		return nil
	}
	if src.File != "" {
		pairs, err := readFile(src.File)
		if err != nil {
			return c, nil, err
		}
		for _, p := range pairs {
			if err := apply(p[0], p[1]); err != nil {
				return c, nil, fmt.Errorf("%s: %w", src.File, err)
			}
		}
	}
	if src.Env != nil {
		for _, k := range Keys {
			if v, ok := src.Env(EnvName(k)); ok {
				if err := apply(k, v); err != nil {
					return c, nil, err
				}
			}
		}
	}
	for _, kv := range src.Set {
		k, v, found := strings.Cut(kv, "=")
		if !found {
			return c, nil, fmt.Errorf("config: --set %q: want key=value", kv)
		}
		if err := apply(k, v); err != nil {
			return c, nil, err
		}
	}
	return c, warnings, nil
}

func readFile(path string) ([][2]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	trimmed := bytes.TrimSpace(data)
	var out [][2]string
	if len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			return nil, fmt.Errorf("config: %s: %w", path, err)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, [2]string{k, fmt.Sprint(obj[k])})
		}
		return out, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("config: %s:%d: want key=value", path, n)
		}
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out, sc.Err()
}
