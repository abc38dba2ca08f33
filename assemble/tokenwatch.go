package assemble

import (
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/infer-workspace/infer/session/config"
)

// tokenCheckEvery is how often a running infer looks at browser_use.yaml
// for a new token. A stat a second costs nothing, and `infer init
// --rotate-token` then takes effect before the person has pasted the new
// token into the extension.
const tokenCheckEvery = time.Second

// tokenSetter is the bridge's side of a rotation (seat.Seat.SetToken,
// which passes it to the bridge while this infer holds it and dials the
// holder with it otherwise; bridge.Server.SetToken in tests).
type tokenSetter interface {
	SetToken(token string) error
}

// tokenWatch follows browser_use.yaml while infer runs and gives the bridge
// a new token as soon as the file has one, so that `infer init
// --rotate-token` needs no restart and the old token stops working at
// once (the bridge drops the connections made with it). Other changes to
// the file need a restart; the log says so.
type tokenWatch struct {
	path string
	srv  tokenSetter
	log  *slog.Logger
	port int // the port the bridge was started with, from the file

	mu    sync.Mutex
	token string

	last      os.FileInfo // the file as last read; nil when it was missing
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// watchToken starts following path, which held token and port when the
// bridge started; every checks how often. Close stops it.
func watchToken(path string, srv tokenSetter, token string, port int, log *slog.Logger, every time.Duration) *tokenWatch {
	w := &tokenWatch{path: path, srv: srv, log: log, port: port, token: token, stop: make(chan struct{}), done: make(chan struct{})}
	w.last, _ = os.Stat(path)
	go w.run(every)
	return w
}

// Token is the token the bridge accepts now.
func (w *tokenWatch) Token() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.token
}

// Close stops watching and waits for the watcher to finish. It may be
// called more than once, as Infer.Close may.
func (w *tokenWatch) Close() {
	w.closeOnce.Do(func() { close(w.stop) })
	<-w.done
}

func (w *tokenWatch) run(every time.Duration) {
	defer close(w.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.check()
		}
	}
}

// check re-reads the file if it changed since the last look. An atomic
// rewrite (what `infer init` does) replaces the file, which the
// comparison of the two stats notices even within one mtime tick.
func (w *tokenWatch) check() {
	fi, err := os.Stat(w.path)
	if err != nil {
		if w.last != nil {
			w.log.Warn("browser_use.yaml is gone; the bridge keeps the token it has", "path", config.DisplayPath(w.path), "err", err)
		}
		w.last = nil
		return
	}
	if w.last != nil && os.SameFile(fi, w.last) && fi.ModTime().Equal(w.last.ModTime()) && fi.Size() == w.last.Size() {
		return
	}
	w.last = fi
	b, _, err := config.LoadBrowserUse(w.path)
	if err != nil {
		w.log.Warn("browser_use.yaml changed but cannot be used; the bridge keeps the token it has", "err", err)
		return
	}
	if !b.Enabled || b.Extension.Token == "" {
		// Also what a file caught half-written looks like; the finished
		// write changes the file again and is read then.
		w.log.Warn("browser_use.yaml now turns browser use off or has no token; the bridge keeps running with the token it has until infer restarts")
		return
	}
	if b.Extension.Port != w.port {
		w.log.Warn("extension.port changed in browser_use.yaml; restart infer to listen on it", "was", w.port, "now", b.Extension.Port)
		w.port = b.Extension.Port
	}
	if b.Extension.Token == w.Token() {
		return
	}
	// Token waits while the bridge switches: once the connections of the
	// old token are closed, nobody may still be shown the old token.
	w.mu.Lock()
	err = w.srv.SetToken(b.Extension.Token)
	if err == nil {
		w.token = b.Extension.Token
	}
	w.mu.Unlock()
	if err != nil {
		w.log.Warn("browser_use.yaml has a token the bridge cannot use; it keeps the one it has", "err", err)
		return
	}
	w.log.Info("the pairing token in browser_use.yaml changed; the bridge now accepts only the new one")
}
