package call

import (
	"net/http"
	"time"
)

// Transport puts Capture and the Idle watchdog in front of base, for
// adapters whose SDK (or none) takes an http.Client rather than
// middleware: responses of 400 and above become *HTTPError, and a server
// silent for idle ends the request with *IdleError. base nil means
// http.DefaultTransport; idle <= 0 watches nothing.
func Transport(base http.RoundTripper, idle time.Duration) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, idle: Idle(idle)}
}

type transport struct {
	base http.RoundTripper
	idle func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error)
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return Capture(req, func(r *http.Request) (*http.Response, error) {
		return t.idle(r, t.base.RoundTrip)
	})
}
