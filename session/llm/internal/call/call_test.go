package call

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/llm"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rows := []struct {
		headers map[string]string
		want    time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After": "0"}, 0},
		{map[string]string{"Retry-After": "-4"}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"retry-after-ms": "15", "Retry-After": "9"}, 15 * time.Millisecond},
		{map[string]string{"retry-after-ms": "x", "Retry-After": "9"}, 9 * time.Second},
	}
	for _, r := range rows {
		h := http.Header{}
		for k, v := range r.headers {
			h.Set(k, v)
		}
		if got := ParseRetryAfter(h, now); got != r.want {
			t.Errorf("ParseRetryAfter(%v) = %v, want %v", r.headers, got, r.want)
		}
	}
}

func TestServerMessage(t *testing.T) {
	rows := []struct{ body, msg, param string }{
		{`{"error":{"message":"bad temp","type":"invalid_request_error","param":"temperature"}}`, "bad temp", "temperature"},
		{`{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}`, "model: claude-x", ""},
		{`{"error":"model \"llama9\" not found, try pulling it first"}`, `model "llama9" not found, try pulling it first`, ""},
		{`[{"error":{"code":400,"message":"API key not valid","status":"INVALID_ARGUMENT"}}]`, "API key not valid", ""},
		{`{"message":"plain"}`, "plain", ""},
		{`{"detail":"Not Found"}`, "Not Found", ""},
		{"<html>\n  <body>Bad   Gateway</body>\n</html>", "<html> <body>Bad Gateway</body> </html>", ""},
		{``, "", ""},
	}
	for _, r := range rows {
		msg, param := ServerMessage([]byte(r.body))
		if msg != r.msg || param != r.param {
			t.Errorf("ServerMessage(%s) = %q, %q; want %q, %q", r.body, msg, param, r.msg, r.param)
		}
	}
	long, _ := ServerMessage([]byte(strings.Repeat("é", 1000)))
	if len(long) > 410 || !strings.HasSuffix(long, "…") {
		t.Errorf("long message not bounded: %d bytes", len(long))
	}
}

func TestBlamed(t *testing.T) {
	rows := []struct {
		msg, param string
		want       Option
	}{
		{"Unsupported value: 'temperature' does not support 0.2 with this model.", "", OptTemperature},
		{"anything", "temperature", OptTemperature},
		{"x", "reasoning_effort", OptEffort},
		{"Unrecognized request argument supplied: reasoning_effort", "", OptEffort},
		{"`temperature` may only be set to 1 when thinking is enabled.", "", OptTemperature},
		{"thinking.type: Input tag 'adaptive' found using 'type' does not match any of the expected tags", "", OptEffort},
		{"output_config.effort: Extra inputs are not permitted", "", OptEffort},
		{`invalid reasoning value: 'minimal' (must be "high", "medium", "low", or "none")`, "", OptEffort},
		{`think value "low" is not supported for this model`, "", OptEffort},
		{"Unknown parameter: 'stream_options'", "", OptStreamOptions},
		{"max_tokens: 32000 > 8192, which is the maximum allowed number of output tokens for claude-3-5-haiku", "", OptMaxTokens},
		{"Invalid value for 'messages[1].content'", "", ""},
		// Mentions of a word that are not a field named: no option blamed.
		{"Gemini models require OpenRouter reasoning details to be preserved", "", ""},
		{"Provider returned error: the model's reasoning was cut short", "", ""},
		{"messages: assistant message has no thinking signature", "", ""},
		{"x", "messages[2].reasoning_details", ""},
		{"Thinking level MINIMAL is not supported for this model.", "", OptEffort},
		{"x", "generationConfig.thinkingConfig.thinkingLevel", OptEffort},
		{"invalid option: temperature", "", OptTemperature},
		{"", "", ""},
	}
	for _, r := range rows {
		if got := Blamed(&HTTPError{Status: 400, Message: r.msg, Param: r.param}); got != r.want {
			t.Errorf("Blamed(%q, %q) = %q, want %q", r.msg, r.param, got, r.want)
		}
	}
}

func TestFallbackEffort(t *testing.T) {
	rows := []struct {
		msg, sent string
		allowed   []string
		want      string
	}{
		{"'reasoning_effort' does not support 'none' with this model. Supported values are: 'low', 'medium', and 'high'.", "none", nil, "low"},
		{"Supported values are: 'minimal', 'low', 'medium', 'high'.", "none", nil, "minimal"},
		{"does not support 'high'. Supported values are: 'low' and 'medium'.", "high", nil, "medium"},
		{"Supported values are 'low' and 'high'.", "medium", nil, "low"}, // a tie goes lower
		{`must be "high", "medium", "low", or "none"`, "minimal", nil, "none"},
		{"Supported values are: 'low', 'medium'.", "none", []string{"medium"}, "medium"},
		{"not supported", "none", nil, ""},
		{"'none' is not supported", "none", nil, ""},
		{"Supported: 'low'", "bogus", nil, ""},
	}
	for _, r := range rows {
		if got := FallbackEffort(r.msg, r.sent, r.allowed); got != r.want {
			t.Errorf("FallbackEffort(%q, %q) = %q, want %q", r.msg, r.sent, got, r.want)
		}
	}
}

func TestAllowedMaxTokens(t *testing.T) {
	msg := "max_tokens: 32000 > 8192, which is the maximum allowed number of output tokens for claude-3-5-haiku-20241022"
	if got := allowedMaxTokens(msg, 32000); got != 8192 {
		t.Fatalf("got %d, want 8192", got)
	}
	if got := allowedMaxTokens("max_tokens too large", 32000); got != 0 {
		t.Fatalf("got %d, want 0", got)
	}
}

func TestAdjustOnlyOncePerOption(t *testing.T) {
	he := &HTTPError{Status: 400, Message: "temperature unsupported"}
	a, ok := Adjust{}.next(he, Sent{Temperature: true}, nil)
	if !ok || !a.DropTemperature {
		t.Fatalf("first rejection: %+v %v", a, ok)
	}
	if _, ok := a.next(he, Sent{}, nil); ok {
		t.Fatal("a second rejection of the same option was retried again")
	}
	if _, ok := (Adjust{}).next(he, Sent{}, nil); ok {
		t.Fatal("retried without an option we never sent")
	}
	if _, ok := (Adjust{}).next(&HTTPError{Status: 500, Message: "temperature"}, Sent{Temperature: true}, nil); ok {
		t.Fatal("a 500 is not a rejection")
	}
}

func TestRunCancelledDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := Policy{Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }}
	calls := 0
	_, err := p.Run(ctx, Target{Provider: "x"}, func(ctx context.Context, adj Adjust) (Result, error) {
		calls++
		return Result{}, &HTTPError{Status: 503}
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

func TestRunNoRetryPolicy(t *testing.T) {
	calls := 0
	_, err := Policy{Retries: -1}.Run(context.Background(), Target{Provider: "x"}, func(ctx context.Context, adj Adjust) (Result, error) {
		calls++
		return Result{}, &HTTPError{Status: 503}
	})
	if llm.KindOf(err) != llm.ErrServer || calls != 1 {
		t.Fatalf("kind %v after %d calls", llm.KindOf(err), calls)
	}
}

func TestClassifyRedactsSecret(t *testing.T) {
	secret := "sk-very-secret-key-42"
	tg := Target{Provider: "p", Model: "m", Secret: secret}
	for _, err := range []error{
		&HTTPError{Status: 401, Message: "bad key " + secret},
		&HTTPError{Status: 400, Message: "echo " + secret},
		&StreamError{Reason: "broke", Err: errors.New("near " + secret)},
		errors.New("other " + secret),
	} {
		got := tg.Classify(err, 0)
		var le *llm.Error
		if !errors.As(got, &le) {
			t.Fatalf("not an *llm.Error: %v", got)
		}
		if strings.Contains(got.Error(), secret) || strings.Contains(le.Err.Error(), secret) {
			t.Errorf("secret leaked: %q / %q", got, le.Err)
		}
	}
}

func TestClassifyKinds(t *testing.T) {
	tg := Target{Provider: "p", Model: "m", BaseURL: "http://h/v1"}
	rows := []struct {
		err  error
		want llm.ErrorKind
	}{
		{&HTTPError{Status: 401}, llm.ErrAuth},
		{&HTTPError{Status: 403}, llm.ErrAuth},
		{&HTTPError{Status: 404}, llm.ErrNotFound},
		{&HTTPError{Status: 429}, llm.ErrRateLimited},
		{&HTTPError{Status: 529}, llm.ErrServer},
		{&HTTPError{Status: 400}, llm.ErrBadRequest},
		{&HTTPError{Status: 413}, llm.ErrBadRequest},
		{&StreamError{Reason: "x"}, llm.ErrStream},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, llm.ErrUnreachable},
		{errors.New("weird"), llm.ErrOther},
	}
	for _, r := range rows {
		if got := llm.KindOf(tg.Classify(r.err, 0)); got != r.want {
			t.Errorf("Classify(%v) kind = %v, want %v", r.err, got, r.want)
		}
	}
	if err := tg.Classify(context.Canceled, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancellation must stay ctx.Err(): %v", err)
	}
}

// A provider that echoes part of the key (cut at either end, or a slice
// from the middle) must not get that part shown.
func TestClassifyRedactsKeyFragments(t *testing.T) {
	const secret = "sk-proj-Qx7vLm2NpR4tZ8wYb3KdF6hJ9sA1cE5gU0iO"
	tg := Target{Provider: "p", Model: "m", Secret: secret}
	for name, echoed := range map[string]string{
		"minus first two": secret[2:],
		"minus last two":  secret[:len(secret)-2],
		"middle slice":    secret[12:32],
		"prefix":          secret[:10],
		"suffix":          secret[len(secret)-9:],
	} {
		for _, err := range []error{
			&HTTPError{Status: 401, Message: "Incorrect API key provided: " + echoed + "."},
			&HTTPError{Status: 400, Message: "key '" + echoed + "' is malformed"},
			&StreamError{Reason: "broke", Err: errors.New("auth " + echoed)},
			errors.New("other " + echoed),
		} {
			got := tg.Classify(err, 0)
			var le *llm.Error
			if !errors.As(got, &le) {
				t.Fatalf("%s: not an *llm.Error: %v", name, got)
			}
			for _, text := range []string{got.Error(), le.Err.Error()} {
				if leaked := longestSharedRun(text, secret); leaked >= minFragment {
					t.Errorf("%s: %d characters of the key leaked in %q", name, leaked, text)
				}
				if !strings.Contains(text, "[redacted]") {
					t.Errorf("%s: no redaction in %q", name, text)
				}
			}
		}
	}
}

// longestSharedRun is the length of the longest run of characters that a
// and b share, computed naively (the test's own reference).
func longestSharedRun(a, b string) int {
	best := 0
	for i := range len(a) {
		for j := range len(b) {
			n := 0
			for i+n < len(a) && j+n < len(b) && a[i+n] == b[j+n] {
				n++
			}
			best = max(best, n)
		}
	}
	return best
}

func TestRedact(t *testing.T) {
	const secret = "sk-ant-api03-Zy8xWv7uTs6rQp5oNm4lKj3iHg2fEd1c"
	for _, c := range []struct{ in, want string }{
		{"bad key " + secret + " here", "bad key [redacted] here"},
		{"bad key " + secret[2:] + ".", "bad key [redacted]."},
		{"bad key " + secret[:len(secret)-2] + ".", "bad key [redacted]."},
		{"slice <" + secret[15:35] + ">", "slice <[redacted]>"},
		// Masked by the provider: the runs it kept are removed, short
		// ends stay.
		{"key " + secret[:16] + "****" + secret[len(secret)-4:], "key [redacted]****" + secret[len(secret)-4:]},
		// Ordinary text, and runs shorter than the threshold, are kept.
		{"the model was not found: check the model id", "the model was not found: check the model id"},
		{"token ending in " + secret[len(secret)-4:], "token ending in " + secret[len(secret)-4:]},
		{"", ""},
	} {
		if got := redact(c.in, secret); got != c.want {
			t.Errorf("redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Short secrets: the whole key only; too short ones not at all.
	if got := redact("ollama-key failed; ollama-ke", "ollama-key"); got != "[redacted] failed; [redacted]" {
		t.Errorf("10-character key: %q", got)
	}
	if got := redact("a local secret: s3cr3t, s3cr3", "s3cr3t"); got != "a local secret: [redacted], s3cr3" {
		t.Errorf("6-character key: %q", got)
	}
	if got := redact("abc abcd", "abcd"); got != "abc abcd" {
		t.Errorf("4-character key: %q", got)
	}
	// A key with non-ASCII characters is never cut inside one.
	const odd = "ключ-secret-π-42-ключ"
	if got := redact("x"+odd+"y", odd[1:len(odd)-1]); got != "x[redacted]y" {
		t.Errorf("non-ASCII key: %q", got)
	}
}
