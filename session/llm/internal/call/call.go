// Package call runs one provider request under infer's retry policy and
// turns HTTP and stream failures into *llm.Error values a person can act on.
//
// The adapters switch their SDK's own retries off and send every request
// through Policy.Run, so which failures are retried, how long to wait and
// when an option is dropped is decided here, once, with one set of tests.
package call

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/infer-workspace/infer/session/llm"
)

// Policy bounds retries. The zero value is the default policy.
type Policy struct {
	// Retries is how many times a 429 or 5xx is retried: 0 means the
	// default (3), a negative number means never.
	Retries int
	// BaseDelay is the first backoff, doubled on each retry (default 500ms).
	BaseDelay time.Duration
	// MaxDelay is the longest single wait (default 30s). A Retry-After
	// longer than this is reported to the person instead of waited out.
	MaxDelay time.Duration
	// Sleep waits for d or until ctx is done; tests replace it to record
	// the waits instead of sleeping.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (p Policy) withDefaults() Policy {
	switch {
	case p.Retries == 0:
		p.Retries = 3
	case p.Retries < 0:
		p.Retries = 0
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	return p
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// KeyHint is Target.KeyHint for a key read from where (an environment
// variable or a config key; "" when not known).
func KeyHint(where string) string {
	if where == "" {
		return "check the API key"
	}
	return "check the API key in " + where
}

// Target says who a request went to, for error messages.
type Target struct {
	Provider string // e.g. "openai"
	Model    string
	BaseURL  string
	// KeyHint tells a person how to fix a rejected key, e.g. "check
	// OPENAI_API_KEY".
	KeyHint string
	// Secret is removed from every message before it leaves this package.
	Secret string
	// Memory, when set, starts each request with what the model rejected
	// before and learns from each new rejection.
	Memory *Memory
	// Effort is the effort the request asked for, which effort rejections
	// are remembered under.
	Effort llm.Effort
}

// Endpoint is what an adapter knows of the server it sends to, from its
// configuration: every call's Target is made from it, and it remembers,
// for the session, what the models rejected.
type Endpoint struct {
	provider, baseURL, keyHint, secret string
	memory                             *Memory
}

// NewEndpoint describes provider's server at baseURL; keyFrom names where
// its key secret was read (see KeyHint).
func NewEndpoint(provider, baseURL, keyFrom, secret string) Endpoint {
	return Endpoint{provider: provider, baseURL: baseURL, keyHint: KeyHint(keyFrom), secret: secret, memory: NewMemory()}
}

// Target is the target of a call about model that learns nothing from a
// rejection (listing models, a search).
func (e Endpoint) Target(model string) Target {
	return Target{Provider: e.provider, Model: model, BaseURL: e.baseURL, KeyHint: e.keyHint, Secret: e.secret}
}

// StreamTarget is the target of a completion: it starts from what the
// model rejected before and remembers new rejections, by requested effort.
func (e Endpoint) StreamTarget(req llm.Request) Target {
	t := e.Target(req.Model)
	t.Memory, t.Effort = e.memory, req.Effort
	return t
}

// Rejections lists what model rejected this session (a parameter left out
// or sent in another form from then on), for the model's details.
func (e Endpoint) Rejections(model string) []string { return e.memory.Notes(model) }

// Result is what one attempt produced.
type Result struct {
	Completion llm.Completion
	Sent       Sent
	// Emitted reports whether any delta reached the caller; an attempt that
	// emitted is never retried, because the caller already showed it.
	Emitted bool
	// Supported lists effort values the adapter knows the provider accepts,
	// to filter a rejection's suggestions (nil: any effort word).
	Supported []string
}

// Attempt performs one request with the given adjustments.
type Attempt func(ctx context.Context, adj Adjust) (Result, error)

// StreamError reports a stream that broke after the response started: the
// connection dropped, the server sent something that is not the protocol,
// or it ended without its end marker.
type StreamError struct {
	Reason string
	Err    error
}

// Error says why the stream broke.
func (e *StreamError) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return e.Reason + ": " + e.Err.Error()
}

// Unwrap returns the underlying read error, if any.
func (e *StreamError) Unwrap() error { return e.Err }

// Run calls attempt until it succeeds or fails for good. A 400 or 422 that
// names an option we sent is retried once without it (or with a value the
// provider said it supports); 429 and 5xx are retried up to p.Retries times
// with backoff, honouring Retry-After, but only while nothing was emitted.
// The returned completion always holds what the last attempt received.
func (p Policy) Run(ctx context.Context, t Target, attempt Attempt) (llm.Completion, error) {
	p = p.withDefaults()
	adj := t.Memory.start(t.Model, t.Effort)
	retries := 0
	for {
		r, err := attempt(ctx, adj)
		if err == nil {
			return r.Completion, nil
		}
		if ctx.Err() != nil {
			return r.Completion, ctx.Err()
		}
		var he *HTTPError
		if !r.Emitted && errors.As(err, &he) {
			he.Message = redact(he.Message, t.Secret)
			if next, ok := adj.next(he, r.Sent, r.Supported); ok {
				t.Memory.learn(t.Model, t.Effort, adj, next, r.Sent)
				adj = next
				continue
			}
			if retryable(he.Status) && retries < p.Retries {
				wait := p.BaseDelay << retries
				if he.RetryAfter > 0 {
					wait = he.RetryAfter
				}
				if wait <= p.MaxDelay {
					if serr := p.Sleep(ctx, wait); serr != nil {
						return r.Completion, serr
					}
					retries++
					continue
				}
			}
		}
		return r.Completion, t.Classify(err, retries)
	}
}

func retryable(status int) bool { return status == 429 || status >= 500 }

// Classify turns err into an *llm.Error whose message says what failed and
// what to do. The secret never appears in it.
func (t Target) Classify(err error, retries int) error {
	e := &llm.Error{Kind: llm.ErrOther, Provider: t.Provider, Model: t.Model}
	var he *HTTPError
	var se *StreamError
	var ie *IdleError
	var ne net.Error
	switch {
	case errors.As(err, &ie):
		// Before the cancellation checks: the watchdog's own cancellation
		// must not pass for the person's interrupt.
		e.Kind = llm.ErrStream
		e.Message = ie.Error() + "; any partial answer was kept"
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &he):
		e.Status = he.Status
		e.Message, e.Kind = t.httpMessage(he, retries)
		if he.Status == 429 {
			e.RetryAfter = he.RetryAfter
		}
	case errors.As(err, &se):
		e.Kind = llm.ErrStream
		e.Message = "the response stream broke (" + se.Error() + "); the partial answer was kept"
	case errors.As(err, &ne) || isDialError(err):
		e.Kind = llm.ErrUnreachable
		e.Message = fmt.Sprintf("cannot reach %s (%v): check the address and that the server is running", t.where(), err)
	default:
		e.Message = err.Error()
	}
	e.Message = redact(e.Message, t.Secret)
	e.Err = errors.New(redact(err.Error(), t.Secret))
	return e
}

func (t Target) httpMessage(he *HTTPError, retries int) (string, llm.ErrorKind) {
	said := ""
	if he.Message != "" {
		said = " (the server said: " + he.Message + ")"
	}
	after := ""
	if retries > 0 {
		after = fmt.Sprintf(" after %d retries", retries)
	}
	switch {
	case he.Status == 401 || he.Status == 403:
		hint := t.KeyHint
		if hint == "" {
			hint = "check the API key"
		}
		if he.Status == 403 {
			return fmt.Sprintf("access refused (403 Forbidden)%s: the key may not have access to this model; %s", said, hint), llm.ErrAuth
		}
		return fmt.Sprintf("the API key was refused (401 Unauthorized)%s: %s", said, hint), llm.ErrAuth
	case he.Status == 404 && !aboutModel(he.Message, t.Model):
		at := he.URL
		if at == "" {
			at = t.where()
		}
		return fmt.Sprintf("nothing answers at %s (404 Not Found)%s: the base URL %s looks wrong; check the provider's base_url (OpenAI-style servers usually serve under /v1)", at, said, t.where()), llm.ErrNotFound
	case he.Status == 404:
		return fmt.Sprintf("model %q not found at %s (%s)%s: check the id with the provider's model list", t.Model, t.Provider, t.where(), said), llm.ErrNotFound
	case he.Status == 429:
		wait := ""
		if he.RetryAfter > 0 {
			wait = fmt.Sprintf("; the provider asks to wait %s", he.RetryAfter.Round(time.Second))
		}
		return fmt.Sprintf("rate limited (429)%s%s%s: try again later or check your plan's limits", after, said, wait), llm.ErrRateLimited
	case he.Status >= 500:
		return fmt.Sprintf("server error (%d %s)%s%s: the provider is having trouble, try again later", he.Status, statusText(he.Status), after, said), llm.ErrServer
	default:
		return fmt.Sprintf("request rejected (%d %s)%s", he.Status, statusText(he.Status), said), llm.ErrBadRequest
	}
}

// aboutModel reports whether a 404's message is the provider saying the
// model is unknown (it names the model, or speaks of a model), as opposed
// to a server or proxy that has no such endpoint at all, whose 404 is an
// HTML page or a bare "not found".
func aboutModel(msg, model string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "model") || (model != "" && strings.Contains(m, strings.ToLower(model)))
}

func (t Target) where() string {
	if t.BaseURL != "" {
		return t.BaseURL
	}
	return t.Provider
}

func statusText(code int) string {
	if code == 529 {
		return "Overloaded" // Anthropic's own status
	}
	if s := http.StatusText(code); s != "" {
		return s
	}
	return "error"
}

// isDialError catches connection failures that do not implement net.Error
// once wrapped by a client (DNS, refused, TLS handshake).
func isDialError(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &op) || errors.As(err, &dns)
}

// minKeyLen is the shortest secret redact acts on: shorter ones are not
// real keys, and replacing them would garble ordinary words.
const minKeyLen = 6

// minFragment is the shortest run of a key's characters redact removes when
// the whole key is not there. Providers echo keys in part (cut at either
// end, masked in the middle, a slice quoted in a format error), and each
// part shown narrows the search for the rest. Eight characters of a random
// key turning up in ordinary text by chance is too unlikely to matter; a
// key's public prefix ("sk-proj-") may be removed too, which costs nothing.
const minFragment = 8

// redact replaces every run of at least minFragment characters of secret
// found in s (the whole secret when it is shorter) with "[redacted]".
func redact(s, secret string) string {
	if len(secret) < minKeyLen || s == "" {
		return s
	}
	minRun := min(minFragment, len(secret))
	// mark[i] is set when byte i of s belongs to a run shared with the
	// secret. run[j+1] is the length of the common run ending at the
	// current byte of s and at byte j of secret (the classic longest
	// common substring table, one row at a time).
	mark := make([]bool, len(s))
	run := make([]int, len(secret)+1)
	prev := make([]int, len(secret)+1)
	found := false
	for i := 0; i < len(s); i++ {
		longest := 0
		for j := 0; j < len(secret); j++ {
			if s[i] == secret[j] {
				run[j+1] = prev[j] + 1
			} else {
				run[j+1] = 0
			}
			longest = max(longest, run[j+1])
		}
		if longest >= minRun {
			found = true
			for k := i - longest + 1; k <= i; k++ {
				mark[k] = true
			}
		}
		run, prev = prev, run
	}
	if !found {
		return s
	}
	// Whole characters only: a run of a key with non-ASCII characters may
	// start or end inside one. Starts are widened here, ends below.
	for i := len(s) - 1; i > 0; i-- {
		if mark[i] && !mark[i-1] && !utf8.RuneStart(s[i]) && s[i-1] >= utf8.RuneSelf {
			mark[i-1] = true
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !mark[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := i
		for end < len(s) && mark[end] {
			end++
		}
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		b.WriteString("[redacted]")
		i = end
	}
	return b.String()
}
