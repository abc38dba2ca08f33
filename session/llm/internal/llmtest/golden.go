package llmtest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
)

// Golden is one recorded two-step tool loop: what infer sent, and what it
// made of the recorded streams it got back.
type Golden struct {
	Requests    []GoldenRequest  `json:"requests"`
	Completions []llm.Completion `json:"completions"`
}

// GoldenRequest is one request of a Golden.
type GoldenRequest struct {
	Method string         `json:"method"`
	Path   string         `json:"path"`
	Query  string         `json:"query,omitempty"`
	Body   map[string]any `json:"body"`
}

// NewGolden is the golden of a loop: the requests a Server recorded, and
// the completions its answers became.
func NewGolden(reqs []Recorded, completions ...llm.Completion) Golden {
	g := Golden{Completions: completions}
	for _, rec := range reqs {
		g.Requests = append(g.Requests, GoldenRequest{Method: rec.Method, Path: rec.Path, Query: rec.Query, Body: rec.Body})
	}
	return g
}

// Stream replays testdata/streams/name, a stream recorded in a provider's
// own format, served as contentType.
func Stream(t testing.TB, name, contentType string) Reply {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "streams", name))
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(raw)
	}
}

// TempName names a temperature in a wire golden's file name.
func TempName(t *float64) string {
	if t == nil {
		return "unset"
	}
	return fmt.Sprint(*t)
}

// update is the -update flag of every adapter package's tests, which
// import this package.
var update = flag.Bool("update", false, "rewrite the wire goldens in testdata/golden")

// CompareGolden compares v, as indented JSON, with
// testdata/golden/name.json, or rewrites that file when the tests run with
// -update, so that an SDK bump that changes the wire fails a test.
func CompareGolden(t testing.TB, name string, v any) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestWireGoldens -update to record it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what infer sends now:\n%s\n(if the change is wanted, rerun with -update)", path, got)
	}
}
