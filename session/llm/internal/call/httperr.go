package call

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxErrorBody bounds how much of an error response is read: enough for any
// provider's JSON error, not enough for a misconfigured proxy's HTML page to
// matter.
const maxErrorBody = 64 << 10

// HTTPError is an error response, captured before the SDK parsed it so that
// every provider's errors are classified by the same code.
type HTTPError struct {
	Status     int
	RetryAfter time.Duration // zero when the server did not say
	Message    string        // the server's own message, trimmed
	Param      string        // the request field the server blamed, if it said
	// URL is the address the request went to (without query), so a 404
	// from a wrong base URL can name it.
	URL string
}

// Error gives the status and the server's message.
func (e *HTTPError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

// Capture is SDK middleware (the OpenAI and Anthropic SDKs share its
// signature) that turns responses with status 400 and above into *HTTPError.
// With the SDKs' own retries disabled, the error reaches the adapter as is.
func Capture(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil || res.StatusCode < 400 {
		return res, err
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	_ = res.Body.Close()
	he := &HTTPError{Status: res.StatusCode, RetryAfter: ParseRetryAfter(res.Header, time.Now())}
	he.Message, he.Param = ServerMessage(body)
	if req != nil && req.URL != nil {
		u := *req.URL
		u.RawQuery, u.User = "", nil
		he.URL = u.String()
	}
	return nil, he
}

// ParseRetryAfter reads how long the server asked us to wait: the
// millisecond header OpenAI and Anthropic send, else Retry-After in seconds
// or as an HTTP date. It returns zero when there is no usable value.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && !math.IsInf(ms, 0) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || math.IsInf(s, 0) || s > 24*3600 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// ServerMessage extracts the human message (and the blamed parameter, when
// given) from an error body in any of the shapes providers use:
// {"error":{"message","param"}} (OpenAI, Anthropic, most compatible
// servers), {"error":"text"} (Ollama), {"message":"text"}, a JSON array of
// those (Gemini), or plain text.
func ServerMessage(body []byte) (msg, param string) {
	var v any
	if err := json.Unmarshal(body, &v); err == nil {
		if msg, param, ok := messageFrom(v, 0); ok {
			return tidy(msg), param
		}
	}
	return tidy(string(body)), ""
}

func messageFrom(v any, depth int) (msg, param string, ok bool) {
	if depth > 3 {
		return "", "", false
	}
	switch x := v.(type) {
	case []any:
		if len(x) > 0 {
			return messageFrom(x[0], depth+1)
		}
	case map[string]any:
		if e, found := x["error"]; found {
			if s, isStr := e.(string); isStr && s != "" {
				return s, "", true
			}
			if msg, param, ok := messageFrom(e, depth+1); ok {
				return msg, param, true
			}
		}
		if s, isStr := x["message"].(string); isStr && s != "" {
			p, _ := x["param"].(string)
			return s, p, true
		}
		if s, isStr := x["detail"].(string); isStr && s != "" {
			return s, "", true
		}
	}
	return "", "", false
}

// tidy collapses whitespace and bounds a server message so it fits an error
// line.
func tidy(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const limit = 400
	if len(s) > limit {
		cut := limit
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
