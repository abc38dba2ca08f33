package fakebrowser

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
)

// This file loads documents: about:blank, data: URLs, the in-memory hosts
// (the demo site) and real HTTP(S), with a per-load timeout, a size cap and
// a bounded number of redirects. Failures are reported with the net::ERR_*
// names Chrome uses, so that what an agent sees from the simulator reads
// like what it sees from a real browser:
//
//	DNS lookup failed                    net::ERR_NAME_NOT_RESOLVED
//	connection refused                   net::ERR_CONNECTION_REFUSED
//	connection reset                     net::ERR_CONNECTION_RESET
//	connection closed before a response  net::ERR_EMPTY_RESPONSE
//	network unreachable                  net::ERR_ADDRESS_UNREACHABLE
//	dial or load timeout                 net::ERR_CONNECTION_TIMED_OUT / net::ERR_TIMED_OUT
//	too many redirects                   net::ERR_TOO_MANY_REDIRECTS
//	certificate from an unknown issuer   net::ERR_CERT_AUTHORITY_INVALID
//	certificate for another host         net::ERR_CERT_COMMON_NAME_INVALID
//	expired or not yet valid certificate net::ERR_CERT_DATE_INVALID
//	other TLS failure                    net::ERR_SSL_PROTOCOL_ERROR
//	malformed data: URL                  net::ERR_INVALID_URL
//	a navigation replaced by a newer one net::ERR_ABORTED
//	anything else                        net::ERR_FAILED (with the Go error)
//
// Each message has the form "net::ERR_NAME at <url>".

// response is a loaded resource before it becomes a page.
type response struct {
	url         *url.URL
	status      int
	contentType string // the Content-Type header as sent
	mediaType   string // its media type, lower case
	body        []byte
	method      string
}

// netError is a failed load, named like Chrome's network errors.
type netError struct {
	code   string
	url    string
	detail error // the underlying Go error, for ERR_FAILED
}

func (e *netError) Error() string {
	msg := "net::" + e.code + " at " + e.url
	if e.code == "ERR_FAILED" && e.detail != nil {
		msg += " (" + e.detail.Error() + ")"
	}
	return msg
}

func (e *netError) Unwrap() error { return e.detail }

// tooLargeError is a response over Options.MaxPageBytes. Chrome has no such
// limit; the fake browser keeps every page in memory, so it needs one.
type tooLargeError struct {
	url   string
	limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("page too large: %s is bigger than the fake browser's limit of %s (raise fakebrowser.Options.MaxPageBytes to load it)",
		e.url, formatBytes(e.limit))
}

var (
	errTooManyRedirects = errors.New("too many redirects")
	errLoadTimeout      = errors.New("load timed out")
)

// hostRouter answers requests for the in-memory hosts by calling their
// handlers directly and passes the rest to the network.
type hostRouter struct {
	hosts map[string]http.Handler
	next  http.RoundTripper
}

func (r hostRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	if h, ok := r.hosts[strings.ToLower(req.URL.Hostname())]; ok {
		return serveInMemory(h, req)
	}
	return r.next.RoundTrip(req)
}

// memoryWriter is the http.ResponseWriter of an in-memory request. The body
// streams through a pipe so that the size cap and cancellation stop a
// handler that writes too much or too slowly.
type memoryWriter struct {
	header      http.Header
	sent        http.Header // the header as it was when the status was written
	status      int
	wroteHeader bool
	ready       chan struct{} // closed once the header is final
	pw          *io.PipeWriter
	once        sync.Once
}

func (w *memoryWriter) Header() http.Header { return w.header }

func (w *memoryWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	w.status = code
	// Like a real server, later header changes are not sent.
	w.sent = w.header.Clone()
	w.once.Do(func() { close(w.ready) })
}

func (w *memoryWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		if w.header.Get("Content-Type") == "" {
			w.header.Set("Content-Type", http.DetectContentType(p))
		}
		w.WriteHeader(http.StatusOK)
	}
	return w.pw.Write(p)
}

// memoryBody is an in-memory response body; closing it also drops the
// cancellation hook.
type memoryBody struct {
	*io.PipeReader
	stop func() bool
}

func (b memoryBody) Close() error {
	b.stop()
	return b.PipeReader.Close()
}

// serveInMemory runs handler h for req on a goroutine that ends when the
// handler returns; the handler's writes fail once the caller closes the
// body, so a handler that honours its request context or its write errors
// never outlives the load.
func serveInMemory(h http.Handler, req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &memoryWriter{header: http.Header{}, ready: make(chan struct{}), pw: pw}
	sreq := req.Clone(req.Context())
	sreq.RequestURI = req.URL.RequestURI()
	sreq.Host = req.URL.Host
	sreq.RemoteAddr = "127.0.0.1:1"
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				pw.CloseWithError(fmt.Errorf("in-memory handler panicked: %v", v))
				return
			}
			pw.Close()
		}()
		h.ServeHTTP(w, sreq)
		w.WriteHeader(http.StatusOK) // a handler that wrote nothing sent 200
	}()
	// Cancelling the request ends a body read that a slow handler would
	// otherwise block, and makes the handler's next write fail.
	stop := context.AfterFunc(req.Context(), func() { pr.CloseWithError(req.Context().Err()) })
	select {
	case <-w.ready:
	case <-done:
		w.once.Do(func() { close(w.ready) })
	case <-req.Context().Done():
		stop()
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	status, header := w.status, w.sent
	if status == 0 { // the handler panicked before writing anything
		status, header = http.StatusInternalServerError, http.Header{}
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          memoryBody{PipeReader: pr, stop: stop},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// fetch loads req. The load has its own timeout (Options.LoadTimeout) inside
// the command's context; when the command's context ends first, its error
// is returned as is so the caller can report the command's timeout.
func (b *Browser) fetch(ctx context.Context, req navRequest) (*response, error) {
	switch req.url.Scheme {
	case "about":
		if req.url.Opaque == "blank" {
			return &response{url: req.url, status: 200, contentType: "text/html", mediaType: "text/html", method: "GET"}, nil
		}
		return nil, &netError{code: "ERR_INVALID_URL", url: req.url.String()}
	case "data":
		return b.fetchData(req.url)
	case "http", "https":
	default:
		return nil, fmt.Errorf("cannot load %s: the fake browser loads http, https, data: and about:blank addresses", req.url.Redacted())
	}
	lctx, cancel := context.WithTimeoutCause(ctx, b.opts.LoadTimeout, errLoadTimeout)
	defer cancel()
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hreq, err := http.NewRequestWithContext(lctx, req.method, req.url.String(), body)
	if err != nil {
		return nil, &netError{code: "ERR_INVALID_URL", url: req.url.String(), detail: err}
	}
	hreq.Header.Set("User-Agent", b.opts.UserAgent)
	hreq.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	hreq.Header.Set("Accept-Language", "en-US,en;q=0.9")
	if req.contentType != "" {
		hreq.Header.Set("Content-Type", req.contentType)
	}
	if ref := referrerFor(req.referrer, req.url); ref != "" {
		hreq.Header.Set("Referer", ref)
	}
	if req.method == "POST" && req.referrer != nil {
		hreq.Header.Set("Origin", origin(req.referrer))
	}
	resp, err := b.client.Do(hreq)
	if err != nil {
		return nil, classify(ctx, lctx, err, req.url.String())
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	if resp.ContentLength > b.opts.MaxPageBytes {
		return nil, &tooLargeError{url: final.String(), limit: b.opts.MaxPageBytes}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, b.opts.MaxPageBytes+1))
	if err != nil {
		return nil, classify(ctx, lctx, err, final.String())
	}
	if int64(len(data)) > b.opts.MaxPageBytes {
		return nil, &tooLargeError{url: final.String(), limit: b.opts.MaxPageBytes}
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt == "" {
		ct = http.DetectContentType(data)
		mt, _, _ = mime.ParseMediaType(ct)
	}
	return &response{
		url:         final,
		status:      resp.StatusCode,
		contentType: ct,
		mediaType:   strings.ToLower(mt),
		body:        data,
		method:      resp.Request.Method,
	}, nil
}

// fetchData decodes a data: URL (RFC 2397).
func (b *Browser) fetchData(u *url.URL) (*response, error) {
	raw := u.String()
	rest := strings.TrimPrefix(raw, "data:")
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, &netError{code: "ERR_INVALID_URL", url: raw}
	}
	if i := strings.IndexByte(payload, '#'); i >= 0 {
		payload = payload[:i]
	}
	isBase64 := strings.HasSuffix(strings.ToLower(meta), ";base64")
	if isBase64 {
		meta = meta[:len(meta)-len(";base64")]
	}
	var data []byte
	if isBase64 {
		unescaped, err := url.PathUnescape(payload)
		if err != nil {
			return nil, &netError{code: "ERR_INVALID_URL", url: raw, detail: err}
		}
		clean := strings.Map(func(r rune) rune {
			if isASCIISpace(r) {
				return -1
			}
			return r
		}, unescaped)
		data, err = base64.StdEncoding.DecodeString(clean)
		if err != nil {
			data, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(clean, "="))
		}
		if err != nil {
			return nil, &netError{code: "ERR_INVALID_URL", url: raw, detail: err}
		}
	} else {
		s, err := url.PathUnescape(payload)
		if err != nil {
			return nil, &netError{code: "ERR_INVALID_URL", url: raw, detail: err}
		}
		data = []byte(s)
	}
	if int64(len(data)) > b.opts.MaxPageBytes {
		return nil, &tooLargeError{url: "a data: URL", limit: b.opts.MaxPageBytes}
	}
	ct := meta
	if ct == "" || strings.HasPrefix(ct, ";") {
		ct = "text/plain" + ct
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, ct = "text/plain", "text/plain"
	}
	return &response{url: u, status: 200, contentType: ct, mediaType: strings.ToLower(mt), body: data, method: "GET"}, nil
}

// referrerFor applies Chrome's default referrer policy,
// strict-origin-when-cross-origin: the full address within an origin, only
// the origin across origins, and nothing from HTTPS to HTTP.
func referrerFor(from, to *url.URL) string {
	if from == nil || (from.Scheme != "http" && from.Scheme != "https") {
		return ""
	}
	if from.Scheme == "https" && to.Scheme == "http" {
		return ""
	}
	if origin(from) == origin(to) {
		u := *from
		u.Fragment, u.RawFragment, u.User = "", "", nil
		return u.String()
	}
	return origin(from) + "/"
}

// origin is scheme://host[:port] in lower case.
func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// classify turns a client error into the error the fake browser reports.
func classify(cmdCtx, loadCtx context.Context, err error, target string) error {
	if cmdCtx.Err() != nil {
		return cmdCtx.Err()
	}
	ne := func(code string) error { return &netError{code: code, url: target, detail: err} }
	if errors.Is(context.Cause(loadCtx), errLoadTimeout) {
		return ne("ERR_TIMED_OUT")
	}
	var (
		dnsErr      *net.DNSError
		unknownAuth x509.UnknownAuthorityError
		hostErr     x509.HostnameError
		certErr     x509.CertificateInvalidError
		recordErr   tls.RecordHeaderError
		certVerify  *tls.CertificateVerificationError
		netErr      net.Error
	)
	switch {
	case errors.Is(err, errTooManyRedirects):
		return ne("ERR_TOO_MANY_REDIRECTS")
	case errors.As(err, &dnsErr):
		return ne("ERR_NAME_NOT_RESOLVED")
	case errors.Is(err, syscall.ECONNREFUSED):
		return ne("ERR_CONNECTION_REFUSED")
	case errors.Is(err, syscall.ECONNRESET):
		return ne("ERR_CONNECTION_RESET")
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return ne("ERR_ADDRESS_UNREACHABLE")
	case errors.As(err, &unknownAuth):
		return ne("ERR_CERT_AUTHORITY_INVALID")
	case errors.As(err, &hostErr):
		return ne("ERR_CERT_COMMON_NAME_INVALID")
	case errors.As(err, &certErr):
		if certErr.Reason == x509.Expired {
			return ne("ERR_CERT_DATE_INVALID")
		}
		return ne("ERR_CERT_INVALID")
	case errors.As(err, &certVerify), errors.As(err, &recordErr):
		return ne("ERR_SSL_PROTOCOL_ERROR")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ne("ERR_EMPTY_RESPONSE")
	case errors.As(err, &netErr) && netErr.Timeout():
		return ne("ERR_CONNECTION_TIMED_OUT")
	}
	return ne("ERR_FAILED")
}

// formatBytes renders a size for messages: 10 MiB, 512 KiB, 900 bytes.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
