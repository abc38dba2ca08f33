package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

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

// CompareGolden compares v, as indented JSON, with
// testdata/golden/name.json, or rewrites that file when update is set (each
// package's -update flag), so that an SDK bump that changes the wire fails
// a test.
func CompareGolden(t testing.TB, name string, v any, update bool) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if update {
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
