// Package interop is the Go side of the interop harness: it checks the
// product's Delta tables and index store roots against the real engines —
// delta-rs (the deltalake Python package), Spark 3.5 with delta-spark, and a
// Spark Connect server driven by the Go Spark Connect client.
//
// The package lives in its own module (interop/go, with a replace directive
// pointing at the product module) so that test-only dependencies such as
// github.com/apache/spark-connect-go never enter the product's go.mod, and so
// that the product's `go test ./...` does not descend into it.
//
// What it owns:
//
//   - Env (env.go): the installed harness (the Python virtual environment and
//     JARs that interop/install.sh puts in the cache), and running the Python
//     scripts of interop/scripts with it. A missing installation is an error,
//     never a reason to skip: interop/run.sh installs it first.
//   - Render (canonical.go): the canonical row rendering of docs/interop.md
//     ("Canonical rows"), the Go twin of interop/scripts/canonical.py, so rows
//     our packages produce compare byte for byte with what the engines read.
//   - ConnectServer (connect.go): a local Spark Connect server started from
//     the installed pyspark with spark-submit, stopped by Stop.
//
// The tests are the point of the package; run them with interop/run.sh.
package interop
