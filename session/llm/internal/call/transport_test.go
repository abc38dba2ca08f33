package call

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestTransportCapturesErrorsAndSilence(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/quiet" {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"message":"slow down","param":"x"}}`))
	}))
	defer srv.Close()
	defer close(release)
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: Transport(base, 100*time.Millisecond)}

	_, err := client.Get(srv.URL + "/busy")
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 429 || he.Message != "slow down" || he.RetryAfter != 2*time.Second {
		t.Fatalf("err %v", err)
	}
	_, err = client.Get(srv.URL + "/quiet")
	var ie *IdleError
	if !errors.As(err, &ie) {
		t.Fatalf("silence: %v", err)
	}
}
