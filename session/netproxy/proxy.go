// Package netproxy is the only way out to the network for code infer
// confines: an HTTP proxy (CONNECT tunnels and plain absolute-URI
// requests) on a Unix socket in an owner-only folder, one per confined
// command or MCP server, so that every new destination is put to a
// decider that knows who is asking. The confined code runs in a network
// namespace of its own with nothing but loopback; the forwarder in
// forward.go, started inside that namespace, carries its proxy
// connections to the socket.
package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Dest is one destination a confined program wants to reach.
type Dest struct {
	// Host is the name or address asked for, lower case, without a
	// trailing dot or IPv6 brackets.
	Host string
	// Port is the TCP port.
	Port int
	// Loopback is set when Host is this machine: a loopback or unspecified
	// address, localhost, or a name that resolves to one. Such a host is
	// one of the person's own services, never "the internet".
	Loopback bool
}

// String is host:port.
func (d Dest) String() string { return net.JoinHostPort(d.Host, strconv.Itoa(d.Port)) }

// Decider says whether a destination may be reached: nil allows it, an
// error refuses it and its text is what the confined program is told.
// The proxy asks once per destination and connection; callers that want
// one question per destination remember their answers.
type Decider func(ctx context.Context, d Dest) error

// Proxy is one listening proxy. Close it when its command has ended.
type Proxy struct {
	dir    string
	socket string
	ln     net.Listener
	srv    *http.Server
	decide Decider
	// resolve looks names up; tests replace it.
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)

	mu      sync.Mutex
	tunnels map[net.Conn]struct{}
	closed  bool
}

// dialTimeout bounds connecting to a destination once it is allowed.
const dialTimeout = 30 * time.Second

// Start listens on a fresh socket in a new owner-only folder in Folder
// and serves until Close.
func Start(decide Decider) (*Proxy, error) {
	if decide == nil {
		return nil, errors.New("netproxy: no decider")
	}
	parent, err := makeFolder()
	if err != nil {
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	removeStale(parent)
	dir, err := os.MkdirTemp(parent, "infer-net-")
	if err != nil {
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	sock := filepath.Join(dir, "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	p := &Proxy{dir: dir, socket: sock, ln: ln, decide: decide, tunnels: map[net.Conn]struct{}{},
		resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: time.Minute}
	go p.srv.Serve(ln)
	return p, nil
}

// Socket is the path of the proxy's Unix socket.
func (p *Proxy) Socket() string { return p.socket }

// Close stops the proxy, ends its open tunnels and removes its folder.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	for c := range p.tunnels {
		c.Close()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	os.RemoveAll(p.dir)
	return err
}

// track keeps c to close with the proxy; false when the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.tunnels[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.tunnels, c)
	p.mu.Unlock()
}

// ServeHTTP handles one proxy request: CONNECT opens a tunnel, an
// absolute-URI request is passed on; anything else is not a proxy
// request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "infer's network proxy only passes on proxy requests (CONNECT, or a request with an absolute http:// URL)", http.StatusBadRequest)
		return
	}
	if r.URL.Scheme != "http" {
		http.Error(w, "infer's network proxy passes on only http:// URLs directly; use CONNECT for "+r.URL.Scheme, http.StatusBadRequest)
		return
	}
	p.forward(w, r)
}

// open decides on hostport and connects to it: to the addresses checked,
// never to a second lookup that could answer differently.
func (p *Proxy) open(ctx context.Context, hostport, defaultPort string) (net.Conn, Dest, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, defaultPort
	}
	n, err := strconv.Atoi(port)
	if err != nil || n <= 0 || n > 65535 {
		return nil, Dest{Host: host}, &badRequest{fmt.Sprintf("%q is not a host and port", hostport)}
	}
	d := Dest{Host: strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), "."), Port: n}
	if d.Host == "" {
		return nil, d, &badRequest{"no host given"}
	}
	// The name is decided on before it is looked up: a lookup is itself a
	// message to whoever serves the name's domain, so a name that carries
	// a secret (secret.attacker.example) would leave the machine through
	// infer's resolver before anyone was asked.
	var addrs []netip.Addr
	literal := false
	if a, err := netip.ParseAddr(d.Host); err == nil {
		addrs, literal = []netip.Addr{a.Unmap()}, true
		d.Loopback = isThisMachine(a)
	} else if d.Host == "localhost" || strings.HasSuffix(d.Host, ".localhost") {
		d.Loopback = true
	}
	if err := p.decide(ctx, d); err != nil {
		return nil, d, err
	}
	if !literal && !d.Loopback {
		lctx, cancel := context.WithTimeout(ctx, dialTimeout)
		var err error
		addrs, err = p.resolve(lctx, d.Host)
		cancel()
		if err != nil || len(addrs) == 0 {
			return nil, d, &unreachable{fmt.Sprintf("infer could not look up %s: %v", d.Host, err)}
		}
		// A name allowed as a host on the internet that leads back to
		// this machine is put again as the machine's own service, which
		// only an entry naming it exactly may allow (a wildcard never).
		if slices.ContainsFunc(addrs, isThisMachine) {
			d.Loopback = true
			if err := p.decide(ctx, d); err != nil {
				return nil, d, err
			}
		}
	}
	if len(addrs) == 0 { // localhost: the machine's own, as the person allowed
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	}
	var dialer net.Dialer
	var last error
	for _, a := range addrs {
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		c, err := dialer.DialContext(dctx, "tcp", netip.AddrPortFrom(a.Unmap(), uint16(n)).String())
		cancel()
		if err == nil {
			return c, d, nil
		}
		last = err
	}
	return nil, d, &unreachable{fmt.Sprintf("infer could not connect to %s: %v", d, last)}
}

// isThisMachine reports whether a is the machine infer runs on: a
// loopback or unspecified address, or one of its interfaces' addresses,
// through which its services listening on every address answer too.
func isThisMachine(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsUnspecified() {
		return true
	}
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, ia := range ifaddrs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil && p.Addr().Unmap() == a {
			return true
		}
	}
	return false
}

// badRequest and unreachable are open's failures that are not refusals.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

type unreachable struct{ msg string }

func (e *unreachable) Error() string { return e.msg }

// fail tells the client why: 400 for a malformed target, 502 when the
// destination could not be reached, 403 when the decider refused, with
// the decider's words as the status text too (some tools print only the
// status line).
func fail(w http.ResponseWriter, err error) {
	code := http.StatusForbidden
	var br *badRequest
	var un *unreachable
	switch {
	case errors.As(err, &br):
		code = http.StatusBadRequest
	case errors.As(err, &un):
		code = http.StatusBadGateway
	}
	msg := oneLine(err.Error())
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, msg, code)
		return
	}
	conn, buf, herr := hj.Hijack()
	if herr != nil {
		return
	}
	defer conn.Close()
	body := msg + "\n"
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", code, msg, len(body), body)
	buf.Flush()
}

// oneLine keeps a message fit for a status line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// connect opens a CONNECT tunnel once the destination is allowed.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	up, _, err := p.open(r.Context(), r.Host, "443")
	if err != nil {
		fail(w, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "tunnels are not supported here", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(up) || !p.track(down) {
		up.Close()
		down.Close()
		return
	}
	defer func() {
		p.untrack(up)
		p.untrack(down)
		up.Close()
		down.Close()
	}()
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	pipe(up, down, buf.Reader)
}

// pipe copies both ways until either side ends; what the client sent
// before the tunnel opened (already buffered) goes first.
func pipe(up, down net.Conn, buffered *bufio.Reader) {
	done := make(chan struct{}, 2)
	go func() {
		io.Copy(up, io.MultiReader(io.LimitReader(buffered, int64(buffered.Buffered())), down))
		if c, ok := up.(*net.TCPConn); ok {
			c.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		io.Copy(down, up)
		if c, ok := down.(interface{ CloseWrite() error }); ok {
			c.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

// forward passes one plain http:// request on over a connection opened
// for it alone: the connection is closed after the answer, so a client
// that keeps its proxy connection alive cannot reach a second host on a
// decision made for the first.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	up, _, err := p.open(r.Context(), r.URL.Host, "80")
	if err != nil {
		fail(w, err)
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer func() {
		p.untrack(up)
		up.Close()
	}()
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Close = true
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive", "Te", "Trailer", "Upgrade"} {
		out.Header.Del(h)
	}
	if err := out.Write(up); err != nil {
		fail(w, &unreachable{fmt.Sprintf("infer could not send the request to %s: %v", r.URL.Host, err)})
		return
	}
	resp, err := http.ReadResponse(bufio.NewReader(up), out)
	if err != nil {
		fail(w, &unreachable{fmt.Sprintf("infer got no answer from %s: %v", r.URL.Host, err)})
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		if k == "Connection" || k == "Keep-Alive" {
			continue
		}
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Connection", "close")
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}
