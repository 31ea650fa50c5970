package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFallbacks(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		check      func(Config) bool
		warn       bool
	}{
		{"largeIndexLimit", "3", func(c Config) bool { return c.LargeIndexLimit == 3 }, false},
		{"spark.ariadne.largeIndexLimit", "0", func(c Config) bool { return c.LargeIndexLimit == 500000 }, true},
		{"largeIndexLimit", "abc", func(c Config) bool { return c.LargeIndexLimit == 500000 }, true},
		{"lockMaxWait", "-5", func(c Config) bool { return c.LockMaxWait == -5*time.Second }, false},
		{"lockTimeout", "-5", func(c Config) bool { return c.LockTimeout == 1800*time.Second }, true},
		{"lockRefreshInterval", "0", func(c Config) bool { return c.LockRefreshInterval == 0 }, false},
		{"autoCompactThreshold", "0", func(c Config) bool { return c.HasAutoCompact && c.AutoCompactThreshold == 0 }, false},
		{"autoCompactThreshold", "x", func(c Config) bool { return !c.HasAutoCompact }, true},
		{"autoBloomFpr", "1", func(c Config) bool { return c.AutoBloomFPR == 0.01 }, true},
		{"autoBloomFpr", "0.05", func(c Config) bool { return c.AutoBloomFPR == 0.05 }, false},
		{"repartitionDataFiles", "TRUE", func(c Config) bool { return c.RepartitionDataFiles }, false},
		{"debug", "yes", func(c Config) bool { return !c.Debug }, true},
		{"indexRepartitionCount", "-1", func(c Config) bool { return c.IndexRepartitionCount == 0 }, true},
		{"rowIndexResidentBytes", "-1", func(c Config) bool { return c.RowIndexResidentBytes == -1 }, false},
		{"rowIndexResidentBytes", "1048576", func(c Config) bool { return c.RowIndexResidentBytes == 1<<20 }, false},
		{"rowIndexResidentBytes", "lots", func(c Config) bool { return c.RowIndexResidentBytes == 0 }, true},
		{"rowIndexShapeBytes", "268435456", func(c Config) bool { return c.RowIndexShapeBytes == 256<<20 }, false},
		{"rowIndexShapeBytes", "lots", func(c Config) bool { return c.RowIndexShapeBytes == 0 }, true},
		{"rowIndexVerifyKeys", "true", func(c Config) bool { return c.RowIndexVerifyKeys }, false},
		{"rowIndexVerifyKeys", "yes", func(c Config) bool { return !c.RowIndexVerifyKeys }, true},
	} {
		c := Defaults()
		w, err := c.Set(tc.key, tc.value)
		if err != nil {
			t.Fatalf("%s=%s: %v", tc.key, tc.value, err)
		}
		if !tc.check(c) {
			t.Errorf("%s=%s: unexpected config %+v", tc.key, tc.value, c)
		}
		if (w != "") != tc.warn {
			t.Errorf("%s=%s: warning %q, want warning=%v", tc.key, tc.value, w, tc.warn)
		}
	}
}

func TestLayering(t *testing.T) {
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "c.json")
	os.WriteFile(jsonFile, []byte(`{"largeIndexLimit": 10, "lockTimeout": 5, "debug": true}`), 0o644)
	env := map[string]string{"ARIADNE_LOCK_TIMEOUT": "7", "ARIADNE_AUTO_BLOOM_FPR": "0.2"}
	c, warns, err := Resolve(Sources{
		File: jsonFile,
		Env:  func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Set:  []string{"autoBloomFpr=0.3"},
	})
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	if c.LargeIndexLimit != 10 || c.LockTimeout != 7*time.Second || c.AutoBloomFPR != 0.3 || !c.Debug {
		t.Fatalf("layering wrong: %+v", c)
	}
	kv := filepath.Join(dir, "c.conf")
	os.WriteFile(kv, []byte("# comment\nspark.ariadne.stagingConsolidationThreshold = 4\n"), 0o644)
	c, _, err = Resolve(Sources{File: kv})
	if err != nil || c.StagingConsolidationThreshold != 4 {
		t.Fatal(err, c)
	}
	var uk *UnknownKeyError
	if _, _, err := Resolve(Sources{Set: []string{"nope=1"}}); !errors.As(err, &uk) {
		t.Fatalf("want UnknownKeyError, got %v", err)
	}
	if EnvName("largeIndexLimit") != "ARIADNE_LARGE_INDEX_LIMIT" {
		t.Fatal(EnvName("largeIndexLimit"))
	}
}
