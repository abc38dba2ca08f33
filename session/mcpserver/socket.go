package mcpserver

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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/infer-workspace/infer/internal/privsock"
)

// SocketFile is the socket's name in infer's home. The home is the
// person's alone (0700), and the sandbox hides it from confined commands,
// so a command the agent runs cannot reach the browser through it.
const SocketFile = "mcp.sock"

// handshakeTimeout bounds the first line on a new connection.
const handshakeTimeout = 5 * time.Second

// maxHandshake bounds that line.
const maxHandshake = 4096

// SocketPath is the socket of the infer that holds the bridge for home.
func SocketPath(home string) string { return filepath.Join(home, SocketFile) }

// ErrInUse is returned by Listen when another live process serves the
// socket.
var ErrInUse = errors.New("another infer already serves MCP clients for this home")

// Listener serves MCP clients (infer mcp processes) on the socket.
type Listener struct {
	ln     net.Listener
	path   string
	token  func() string
	srv    *mcp.Server
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	// calls ends the running calls; Close cancels it before ctx, so that
	// their answers go out before the sessions end.
	calls     context.Context
	stopCalls context.CancelFunc
	wg        sync.WaitGroup
	once      sync.Once
}

// Listen binds the socket at path (mode 0600). A socket file left by a
// process that is gone is replaced; one a live process answers on is not
// (ErrInUse). Clients must first send the token (token() at that moment:
// the bridge's, which the person may rotate while infer runs); then run
// serves their calls.
func Listen(path string, token func() string, run Backend, version string, log *slog.Logger) (*Listener, error) {
	if token == nil {
		return nil, errors.New("mcpserver: no token to authenticate clients with")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := privsock.Listen(path)
	if errors.Is(err, privsock.ErrLive) {
		return nil, ErrInUse
	}
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls, stopCalls := context.WithCancel(context.Background())
	l := &Listener{ln: ln, path: path, token: token, log: log, ctx: ctx, cancel: cancel, calls: calls, stopCalls: stopCalls}
	l.srv = New(l.tracked(run), version)
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

// Close stops accepting, cancels the running calls (which withdraws their
// approvals), lets their answers reach the clients, then ends every
// session and removes the socket.
func (l *Listener) Close() error {
	l.once.Do(func() {
		l.ln.Close()
		l.stopCalls()
		l.cancel()
		l.wg.Wait()
		os.Remove(l.path)
	})
	return nil
}

func (l *Listener) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.serve(c)
		}()
	}
}

// serve authenticates one connection and speaks MCP on it until either
// side ends.
func (l *Listener) serve(c net.Conn) {
	defer c.Close()
	// Only infer's own user (and root) may borrow its pipeline and
	// browser: the home is the person's alone, so this only matters if
	// its mode is loosened. Nothing is read or written before.
	if uc, ok := c.(*net.UnixConn); ok {
		if err := privsock.CheckPeer(uc); errors.As(err, new(*privsock.OtherUserError)) {
			l.log.Warn("mcp: " + err.Error() + " connected to the socket; it was closed unanswered")
			return
		} else if err != nil {
			l.log.Warn("mcp: closed a connection whose owner could not be found", "err", err)
			return
		}
	}
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	r := bufio.NewReaderSize(c, maxHandshake)
	line, err := r.ReadSlice('\n')
	var h handshake
	want := l.token()
	if err != nil || json.Unmarshal(line, &h) != nil || want == "" || subtle.ConstantTimeCompare([]byte(h.Token), []byte(want)) != 1 {
		l.log.Warn("mcp: refused a client on the socket: wrong or missing token")
		_ = writeLine(c, handshakeReply{Error: "wrong or missing token"})
		return
	}
	if err := writeLine(c, handshakeReply{OK: true}); err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	l.log.Info("mcp: a client connected through the socket")
	// The reader keeps what it buffered past the handshake.
	// The session's context is not the listener's: a session whose
	// context ends stops writing, and the answers of the calls Close
	// cancels must still go out.
	cl := newClient()
	ctx := context.WithValue(context.Background(), clientKey{}, cl)
	ss, err := l.srv.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(r), Writer: answerWriter{c, cl}}, nil)
	if err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-l.ctx.Done():
			cl.settle(answerGrace)
			ss.Close()
		case <-done:
		}
	}()
	_ = ss.Wait()
	close(done)
	l.log.Info("mcp: a client left")
}

func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Dial connects to the socket at path and authenticates with token. The
// returned connection then speaks MCP (newline-delimited JSON-RPC). An
// error wrapping os.ErrNotExist or a refused connection means no infer
// serves the socket.
func Dial(ctx context.Context, path, token string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	// The token goes only to an infer of this user (or root): another
	// user's socket in its place would receive it.
	if uc, ok := c.(*net.UnixConn); ok {
		if err := privsock.CheckPeer(uc); errors.As(err, new(*privsock.OtherUserError)) {
			c.Close()
			return nil, fmt.Errorf("mcpserver: %s is served by %v; it was not sent the token. Remove it, and keep infer's home a folder only you can write in", path, err)
		} else if err != nil {
			c.Close()
			return nil, fmt.Errorf("mcpserver: cannot tell who serves %s: %w", path, err)
		}
	}
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := writeLine(c, handshake{Token: token}); err != nil {
		c.Close()
		return nil, err
	}
	// Read the answer byte by byte: anything after it is MCP and belongs
	// to the caller.
	var line []byte
	b := make([]byte, 1)
	for len(line) < maxHandshake {
		if _, err := c.Read(b); err != nil {
			c.Close()
			return nil, fmt.Errorf("mcpserver: the running infer did not answer the handshake: %w", err)
		}
		if b[0] == '\n' {
			break
		}
		line = append(line, b[0])
	}
	var reply handshakeReply
	if err := json.Unmarshal(line, &reply); err != nil || !reply.OK {
		c.Close()
		if reply.Error != "" {
			return nil, fmt.Errorf("mcpserver: the running infer refused the connection: %s", reply.Error)
		}
		return nil, errors.New("mcpserver: the running infer answered the handshake with something else")
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}
