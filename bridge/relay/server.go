package relay

import (
	"bufio"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/infer-workspace/infer/internal/privsock"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/config"
)

// Server serves one Source to guests on the socket.
type Server struct {
	ln     *net.UnixListener
	path   string
	file   os.FileInfo // the socket file as made, so Close removes only ours
	token  func() string
	src    Source
	holder Holder
	log    *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	mu        sync.Mutex
	closed    bool
	conns     map[net.Conn]struct{}
	guests    map[*guest]struct{}
	published *browser.Status // the latest Publish, nil before the first
}

// Listen binds the socket at path (mode 0600) and serves src on it, in a
// folder that is this user's and that no one else can write in. A
// socket file left by a process that is gone is replaced; one a live
// process answers on is not (ErrInUse). Guests must first send the token
// (token() at that moment: the person may rotate it while infer runs).
func Listen(path string, token func() string, src Source, h Holder, log *slog.Logger) (*Server, error) {
	if token == nil {
		return nil, errors.New("relay: no token to authenticate guests with")
	}
	if src == nil {
		return nil, errors.New("relay: no browser to serve")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Whoever can write in the socket's folder could put a socket of their
	// own in the holder's place, which guests would hand the token and
	// every browser command to.
	if err := config.CheckHome(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	ln, err := privsock.Listen(path)
	if errors.Is(err, privsock.ErrLive) {
		return nil, ErrInUse
	}
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	// Close removes the file itself, and only if it is still this one: a
	// holder that took over after a crash may have put its own there.
	fi, err := os.Lstat(path)
	if err != nil {
		ln.Close()
		os.Remove(path)
		return nil, fmt.Errorf("relay: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		ln: ln, path: path, file: fi, token: token, src: src, holder: h, log: log,
		ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}, guests: map[*guest]struct{}{},
	}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Publish sends st to every guest. The latest status wins: a slow guest
// misses intermediate ones rather than holding the caller up.
func (s *Server) Publish(st browser.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.published = &st
	for g := range s.guests {
		g.offer(st)
	}
}

// Close stops accepting, ends the guests' connections, cancels their
// commands in flight and removes the socket. It is idempotent.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.ln.Close()
		s.mu.Lock()
		s.closed = true
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
		if fi, err := os.Lstat(s.path); err == nil && os.SameFile(fi, s.file) {
			os.Remove(s.path)
		}
	})
	return nil
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// allowed decides on a connection before a byte of it is read: only
// infer's own user (and root, who can read the token and trace infer
// anyway) may talk to the browser. The home is the person's alone, so this
// only matters if its mode is loosened; the token is checked next.
func (s *Server) allowed(c *net.UnixConn) bool {
	err := privsock.CheckPeer(c)
	switch {
	case err == nil:
		return true
	case errors.As(err, new(*privsock.OtherUserError)):
		s.log.Warn("browser relay: " + err.Error() + " connected; it was closed unanswered")
	default:
		s.log.Warn("browser relay: closed a connection whose owner could not be found", "err", err)
	}
	return false
}

// serve authenticates one connection and relays its commands until either
// side ends it.
func (s *Server) serve(c *net.UnixConn) {
	if !s.allowed(c) {
		return
	}
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	r := bufio.NewReader(c)
	line, err := readFrame(r, maxHello)
	if err != nil {
		// A probe (Listen checking whether the socket is live) says
		// nothing and hangs up; that is no news.
		if !errors.Is(err, io.EOF) {
			s.log.Warn("browser relay: a guest did not complete the handshake", "err", err)
		}
		return
	}
	var hi hello
	want := s.token()
	if json.Unmarshal(line, &hi) != nil || want == "" || subtle.ConstantTimeCompare([]byte(hi.Token), []byte(want)) != 1 {
		s.log.Warn("browser relay: refused a guest: wrong or missing token")
		_ = writeFrame(c, welcome{Error: "wrong or missing token"})
		return
	}
	if hi.Version != protocolVersion {
		reason := fmt.Sprintf("this infer speaks browser relay version %d and the other %d: restart the older one", protocolVersion, hi.Version)
		s.log.Warn("browser relay: refused a guest of another version", "theirs", hi.Version, "ours", protocolVersion)
		_ = writeFrame(c, welcome{Error: reason})
		return
	}

	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	g := &guest{s: s, conn: c, ctx: ctx, wake: make(chan struct{}, 1), calls: map[uint64]context.CancelFunc{}}
	// The guest joins the Publish stream and takes its first status under
	// one lock, so it misses no change and sees none out of order. The
	// source is asked first, outside the lock, since its status hook may
	// call Publish while holding its own.
	st := s.src.Status()
	s.mu.Lock()
	s.guests[g] = struct{}{}
	if s.published != nil {
		st = *s.published
	}
	h := s.holder
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.guests, g)
		s.mu.Unlock()
	}()
	if err := g.write(welcome{OK: true, Version: protocolVersion, Holder: &h, Status: &st}); err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	s.log.Info("browser relay: a guest connected")

	g.wg.Add(1)
	go g.pushStatus()
	err = g.read(r)
	// The guest is gone (or misbehaved): its commands are cancelled and
	// their goroutines waited for before the connection is let go.
	cancel()
	c.Close()
	g.wg.Wait()
	switch {
	case err == nil || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed):
		s.log.Info("browser relay: a guest left")
	default:
		s.log.Warn("browser relay: dropped a guest", "err", err)
	}
}

// guest is one connected infer.
type guest struct {
	s    *Server
	conn *net.UnixConn
	ctx  context.Context // ends with the connection or the server
	wg   sync.WaitGroup  // its commands and its status pusher

	wmu sync.Mutex // one frame at a time

	smu     sync.Mutex
	pending *browser.Status
	wake    chan struct{}

	cmu   sync.Mutex
	calls map[uint64]context.CancelFunc
}

// offer leaves st for the guest's pusher, replacing any it has not sent.
func (g *guest) offer(st browser.Status) {
	g.smu.Lock()
	g.pending = &st
	g.smu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// pushStatus sends the latest offered status whenever there is one.
func (g *guest) pushStatus() {
	defer g.wg.Done()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-g.wake:
		}
		g.smu.Lock()
		st := g.pending
		g.pending = nil
		g.smu.Unlock()
		if st != nil {
			_ = g.write(reply{Status: st})
		}
	}
}

// read takes the guest's frames until it hangs up or sends something that
// is not a frame of this protocol.
func (g *guest) read(r *bufio.Reader) error {
	for {
		line, err := readFrame(r, maxFrame)
		if err != nil {
			return err
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			return fmt.Errorf("it sent something other than a request: %w", err)
		}
		switch {
		case req.ID == 0:
			return errors.New("it sent a request without an id")
		case req.Cancel:
			g.cmu.Lock()
			if cancel := g.calls[req.ID]; cancel != nil {
				cancel()
			}
			g.cmu.Unlock()
		case req.Cmd != nil:
			if err := g.start(req.ID, *req.Cmd); err != nil {
				return err
			}
		default:
			return errors.New("it sent a request with neither a command nor a cancel")
		}
	}
}

// start runs cmd on the holder's browser and answers with its outcome.
func (g *guest) start(id uint64, cmd browser.Command) error {
	ctx, cancel := context.WithCancel(g.ctx)
	g.cmu.Lock()
	if _, dup := g.calls[id]; dup {
		g.cmu.Unlock()
		cancel()
		return fmt.Errorf("it reused the id %d of a command in flight", id)
	}
	g.calls[id] = cancel
	g.cmu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		res, err := g.s.src.Do(ctx, cmd)
		g.cmu.Lock()
		delete(g.calls, id)
		g.cmu.Unlock()
		cancel()
		if g.ctx.Err() != nil {
			return
		}
		rep := reply{ID: id}
		if err != nil {
			rep.Error = encodeError(err)
		} else {
			rep.Result = &res
		}
		if werr := g.write(rep); errors.Is(werr, errFrameTooBig) {
			err := fmt.Errorf("the browser's answer to %s is too big to pass to this infer (%w)", cmd.Action, werr)
			_ = g.write(reply{ID: id, Error: encodeError(err)})
		}
	}()
	return nil
}

// write sends one frame. A frame too big to send is refused before any of
// it is written; any other failure ends the connection, since a frame cut
// short leaves the stream unreadable.
func (g *guest) write(v any) error {
	b, err := marshalFrame(v)
	if err != nil {
		return err
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	_ = g.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := g.conn.Write(b); err != nil {
		g.conn.Close()
		return err
	}
	return nil
}

// writeFrame sends one frame on a connection nobody else writes to yet.
func writeFrame(w io.Writer, v any) error {
	b, err := marshalFrame(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
