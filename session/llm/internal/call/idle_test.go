package call

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/llm"
)

func TestClassifyIdleIsAStreamErrorNotAnInterrupt(t *testing.T) {
	err := Target{Provider: "p", Model: "m"}.Classify(&StreamError{Reason: "the stream failed", Err: &IdleError{After: 2 * time.Minute}}, 0)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.ErrStream || !strings.Contains(le.Message, "sent nothing for 2m0s") {
		t.Fatalf("Classify = %#v", err)
	}
}

func TestIdleEndsASilentBodyAndPassesALiveOne(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/silent" {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		io.WriteString(w, " second")
	}))
	defer srv.Close()
	defer close(release)
	// Each body's data must arrive within the idle timeout: the headers
	// and "first" from the request's start, " second" from "first". That
	// takes milliseconds, but a loaded machine under -race can stall for
	// longer than the 150ms this once had, so the window is wide; the
	// silent body ends after the timeout whatever its length.
	const idle = 2 * time.Second
	get := func(path string) (string, error) {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL+path, nil)
		res, err := Idle(idle)(req, http.DefaultClient.Do)
		if err != nil {
			return "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return string(b), err
	}
	body, err := get("/silent")
	var ie *IdleError
	if body != "first" || !errors.As(err, &ie) || ie.After != idle {
		t.Fatalf("silent body: %q, %v", body, err)
	}
	if body, err := get("/live"); body != "first second" || err != nil {
		t.Fatalf("live body: %q, %v", body, err)
	}
}
