package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"
	"github.com/infer-workspace/infer/internal/syncbuf"
	"github.com/infer-workspace/infer/session/browser"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(dialHelperEnv); addr != "" {
		dialHelper(addr, os.Getenv(dialHelperTokenEnv))
		return
	}
	if path := os.Getenv(squatHelperEnv); path != "" {
		squatHelper(path)
		return
	}
	if path := os.Getenv(holdHelperEnv); path != "" {
		holdHelper(path)
		return
	}
	goleak.VerifyTestMain(m, leaks.Options()...)
}

// guard bounds waits that only a bug would make long.
const guard = 20 * time.Second

// fakeSource is a holder's bridge: it answers with do, or with a result
// naming the command, and reports status.
type fakeSource struct {
	mu     sync.Mutex
	seen   []browser.Command
	status browser.Status
	do     func(ctx context.Context, cmd browser.Command) (browser.Result, error)
}

func (f *fakeSource) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	f.mu.Lock()
	f.seen = append(f.seen, cmd)
	do := f.do
	f.mu.Unlock()
	if do != nil {
		return do(ctx, cmd)
	}
	return browser.Result{URL: "https://example.test/", Title: string(cmd.Action)}, nil
}

func (f *fakeSource) Status() browser.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status
}

func (f *fakeSource) commands() []browser.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]browser.Command(nil), f.seen...)
}

// holder is a Server under test with what it logged.
type holder struct {
	*Server
	path string
	src  *fakeSource
	logs *syncbuf.Buffer
}

var testHolder = Holder{Root: "/home/p/src/foo", PID: 123, Command: "infer serve", Port: 52789}

func startHolder(t *testing.T, src *fakeSource) *holder {
	t.Helper()
	if src == nil {
		src = &fakeSource{}
	}
	path := SocketPath(t.TempDir())
	logs := &syncbuf.Buffer{}
	srv, err := Listen(path, func() string { return "secret" }, src, testHolder, slogTo(logs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &holder{Server: srv, path: path, src: src, logs: logs}
}

func dial(t *testing.T, path string, onStatus func(browser.Status)) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	c, err := Dial(ctx, path, "secret", onStatus)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

func TestEveryActionRoundTrips(t *testing.T) {
	results := map[browser.Action]browser.Result{
		browser.Navigate:   {URL: "https://example.test/a", Title: "A", Events: []string{`{"type":"navigated"}`}},
		browser.Click:      {URL: "https://example.test/a", Title: "A"},
		browser.Type:       {URL: "https://example.test/a", Title: "A"},
		browser.Read:       {URL: "https://example.test/a", Title: "A", Content: "héllo\nworld", Missing: false},
		browser.Screenshot: {URL: "https://example.test/a", Title: "A", Image: []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}, ImageMIME: "image/png"},
		browser.Tabs: {Tabs: []browser.Tab{
			{Index: 0, URL: "https://example.test/a", Title: "A", Active: true, Controlled: true},
			{Index: 1, URL: "about:blank", Title: ""},
		}},
	}
	src := &fakeSource{do: func(_ context.Context, cmd browser.Command) (browser.Result, error) {
		if cmd.Action == browser.Read && cmd.Selector == "#none" {
			return browser.Result{URL: "https://example.test/a", Missing: true}, nil
		}
		return results[cmd.Action], nil
	}}
	h := startHolder(t, src)
	c := dial(t, h.path, nil)
	if c.Holder() != testHolder {
		t.Fatalf("holder %+v, want %+v", c.Holder(), testHolder)
	}
	cmds := []browser.Command{
		{Action: browser.Navigate, URL: "https://example.test/a", Timeout: 7 * time.Second},
		{Action: browser.Click, Selector: "button.go"},
		{Action: browser.Type, Selector: "input", Text: "hi there", PressEnter: true},
		{Action: browser.Read, Selector: "h1"},
		{Action: browser.Screenshot},
		{Action: browser.Tabs},
	}
	ctx := testCtx(t)
	for _, cmd := range cmds {
		got, err := c.Do(ctx, cmd)
		if err != nil {
			t.Fatalf("%s: %v", cmd.Action, err)
		}
		if !reflect.DeepEqual(got, results[cmd.Action]) {
			t.Errorf("%s: got %+v, want %+v", cmd.Action, got, results[cmd.Action])
		}
	}
	got, err := c.Do(ctx, browser.Command{Action: browser.Read, Selector: "#none"})
	if err != nil || !got.Missing {
		t.Errorf("missing read: %+v %v", got, err)
	}
	if seen := h.src.commands(); !reflect.DeepEqual(seen[:len(cmds)], cmds) {
		t.Errorf("the holder ran %+v, want %+v", seen, cmds)
	}
}

func TestManyGuestsAndConcurrentCalls(t *testing.T) {
	h := startHolder(t, &fakeSource{do: func(_ context.Context, cmd browser.Command) (browser.Result, error) {
		return browser.Result{Content: cmd.Selector}, nil
	}})
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := range 4 {
		c := dial(t, h.path, nil)
		for i := range 10 {
			wg.Go(func() {
				sel := fmt.Sprintf("g%d-%d", g, i)
				res, err := c.Do(ctx, browser.Command{Action: browser.Read, Selector: sel})
				if err == nil && res.Content != sel {
					err = fmt.Errorf("asked for %s, got %s", sel, res.Content)
				}
				if err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestErrorsKeepTheirKindAndMessage(t *testing.T) {
	cmdErr := &browser.CommandError{Action: browser.Navigate, Message: "net::ERR_NAME_NOT_RESOLVED"}
	cases := []error{
		browser.ErrNotConnected,
		browser.ErrDisconnected,
		browser.ErrTimeout,
		fmt.Errorf("browser read: %w (after 30s)", browser.ErrTimeout),
		fmt.Errorf("browser read: %w (5 connections replaced in 30s): disconnect one", browser.ErrFlapping),
		cmdErr,
		fmt.Errorf("while opening: %w", cmdErr),
		errors.New("something else went wrong"),
		context.DeadlineExceeded,
	}
	var next error
	h := startHolder(t, &fakeSource{do: func(context.Context, browser.Command) (browser.Result, error) {
		return browser.Result{}, next
	}})
	c := dial(t, h.path, nil)
	ctx := testCtx(t)
	for _, want := range cases {
		next = want
		_, got := c.Do(ctx, browser.Command{Action: browser.Navigate, URL: "https://nowhere.test/"})
		if got == nil {
			t.Fatalf("%v: no error", want)
		}
		if got.Error() != want.Error() {
			t.Errorf("message %q, want %q", got, want)
		}
		for _, s := range sentinels {
			if errors.Is(got, s.err) != errors.Is(want, s.err) {
				t.Errorf("%q: errors.Is(%s) = %v on the guest", want, s.name, errors.Is(got, s.err))
			}
		}
		var ce *browser.CommandError
		if errors.As(want, &ce) {
			var gce *browser.CommandError
			if !errors.As(got, &gce) || *gce != *ce {
				t.Errorf("%q: errors.As CommandError gave %+v", want, gce)
			}
		} else if errors.As(got, &ce) {
			t.Errorf("%q: the guest sees a CommandError", want)
		}
		if (want == browser.ErrNotConnected || want == browser.ErrTimeout) && got != want {
			t.Errorf("the sentinel %q itself did not come back as itself", want)
		}
	}
}

func TestCancelReachesTheHolder(t *testing.T) {
	started := make(chan struct{})
	ended := make(chan error, 1)
	h := startHolder(t, &fakeSource{do: func(ctx context.Context, _ browser.Command) (browser.Result, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return browser.Result{}, ctx.Err()
	}})
	c := dial(t, h.path, nil)
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() {
		<-started
		cancel()
	}()
	if _, err := c.Do(ctx, browser.Command{Action: browser.Read, Selector: "h1"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Do: %v, want context.Canceled", err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the holder's call ended with %v", err)
		}
	case <-time.After(guard):
		t.Fatal("the holder's call was not cancelled")
	}
	// The connection goes on serving.
	h.src.mu.Lock()
	h.src.do = nil
	h.src.mu.Unlock()
	if _, err := c.Do(testCtx(t), browser.Command{Action: browser.Tabs}); err != nil {
		t.Fatal(err)
	}
}

func TestStatusAtDialAndOnEveryChange(t *testing.T) {
	since := time.Date(2026, 12, 6, 1, 2, 3, 0, time.UTC)
	src := &fakeSource{status: browser.Status{State: browser.Waiting}}
	h := startHolder(t, src)

	// Before any Publish, a guest gets the bridge's own status.
	first := dial(t, h.path, nil)
	if st := first.Status(); st.State != browser.Waiting {
		t.Fatalf("status at dial %+v", st)
	}
	connected := browser.Status{State: browser.Connected, ExtensionVersion: "1.12.1", Since: since, RTT: 3 * time.Millisecond}
	h.Publish(connected)

	got := make(chan browser.Status, 10)
	c := dial(t, h.path, func(st browser.Status) { got <- st })
	if st := c.Status(); !reflect.DeepEqual(st, connected) {
		t.Fatalf("status at dial %+v, want the latest published %+v", st, connected)
	}
	gone := browser.Status{State: browser.Disconnected, Since: since.Add(time.Second), Reason: "the extension closed the connection", Flapping: 3}
	h.Publish(gone)
	select {
	case st := <-got:
		if !reflect.DeepEqual(st, gone) {
			t.Fatalf("pushed %+v, want %+v", st, gone)
		}
	case <-time.After(guard):
		t.Fatal("no status pushed")
	}
	if st := c.Status(); !reflect.DeepEqual(st, gone) {
		t.Errorf("Status() %+v after the push", st)
	}
	waitFor(t, func() bool { return first.Status().State == browser.Disconnected })
}

func TestSlowGuestBlocksNeitherPublishNorOthers(t *testing.T) {
	h := startHolder(t, nil)
	release := make(chan struct{})
	// This guest's status hook never returns until the end, and the raw
	// one below never reads at all.
	stuck := dial(t, h.path, func(browser.Status) { <-release })
	defer close(release)
	rawGuest(t, h.path)
	var last browser.Status
	for i := range 200 {
		last = browser.Status{State: browser.Connected, RTT: time.Duration(i+1) * time.Millisecond}
		h.Publish(last)
	}
	fast := make(chan browser.Status, 1000)
	c := dial(t, h.path, func(st browser.Status) { fast <- st })
	h.Publish(browser.Status{State: browser.Connected, RTT: time.Hour})
	waitFor(t, func() bool { return c.Status().RTT == time.Hour })
	if _, err := c.Do(testCtx(t), browser.Command{Action: browser.Tabs}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return stuck.Status().RTT == time.Hour })
}

func TestWrongTokenIsRefused(t *testing.T) {
	token := "first"
	var mu sync.Mutex
	path := SocketPath(t.TempDir())
	logs := &syncbuf.Buffer{}
	srv, err := Listen(path, func() string { mu.Lock(); defer mu.Unlock(); return token }, &fakeSource{}, testHolder, slogTo(logs))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := testCtx(t)
	_, err = Dial(ctx, path, "wrong", nil)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "wrong or missing token") {
		t.Fatalf("wrong token: %v", err)
	}
	if !strings.Contains(logs.String(), "wrong or missing token") {
		t.Errorf("the refusal is not logged:\n%s", logs)
	}
	// The token is read at each handshake: after a rotation the old one
	// is refused and the new one let in.
	mu.Lock()
	token = "second"
	mu.Unlock()
	if _, err := Dial(ctx, path, "first", nil); !errors.Is(err, ErrRefused) {
		t.Fatalf("old token after rotation: %v", err)
	}
	c, err := Dial(ctx, path, "second", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestNobodyServing(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	if _, err := Dial(ctx, filepath.Join(dir, SocketFile), "secret", nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no socket file: %v, want os.ErrNotExist", err)
	}
	path := leaveStaleSocket(t, dir)
	if _, err := Dial(ctx, path, "secret", nil); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("stale socket file: %v, want ECONNREFUSED", err)
	}
}

func TestStaleSocketIsReplacedLiveOneIsNot(t *testing.T) {
	dir := t.TempDir()
	path := leaveStaleSocket(t, dir)
	srv, err := Listen(path, func() string { return "secret" }, &fakeSource{}, testHolder, nil)
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket file: %v %v", fi, err)
	}
	if _, err := Listen(path, func() string { return "secret" }, &fakeSource{}, testHolder, nil); !errors.Is(err, ErrInUse) {
		t.Fatalf("over a live socket: %v, want ErrInUse", err)
	}
	// The refused second Listen left the live one alone.
	c := dial(t, path, nil)
	if _, err := c.Do(testCtx(t), browser.Command{Action: browser.Tabs}); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	srv.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("the socket outlived Close: %v", err)
	}
}

func TestCloseLeavesAnotherHoldersSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, SocketFile)
	srv, err := Listen(path, func() string { return "secret" }, &fakeSource{}, testHolder, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Someone removed the file and another holder bound the path.
	os.Remove(path)
	other, err := Listen(path, func() string { return "secret" }, &fakeSource{}, testHolder, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	srv.Close()
	dial(t, path, nil)
}

func TestHolderCloseEndsGuests(t *testing.T) {
	started := make(chan struct{})
	holderCtx := make(chan error, 1)
	h := startHolder(t, &fakeSource{do: func(ctx context.Context, _ browser.Command) (browser.Result, error) {
		close(started)
		<-ctx.Done()
		holderCtx <- ctx.Err()
		return browser.Result{}, ctx.Err()
	}})
	c := dial(t, h.path, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Do(testCtx(t), browser.Command{Action: browser.Read, Selector: "h1"})
		errc <- err
	}()
	<-started
	h.Close()
	select {
	case <-c.Done():
	case <-time.After(guard):
		t.Fatal("Done was not closed when the holder closed")
	}
	err := <-errc
	if !errors.Is(err, ErrHolderGone) || !errors.Is(err, browser.ErrDisconnected) {
		t.Fatalf("call in flight: %v, want ErrHolderGone matching browser.ErrDisconnected", err)
	}
	if err := <-holderCtx; err == nil {
		t.Error("the holder's call was not cancelled")
	}
	if _, err := c.Do(testCtx(t), browser.Command{Action: browser.Tabs}); !errors.Is(err, ErrHolderGone) {
		t.Fatalf("call after Done: %v", err)
	}
	if _, err := os.Lstat(h.path); !os.IsNotExist(err) {
		t.Errorf("the socket outlived Close: %v", err)
	}
}

// TestHolderCrashEndsGuests stands a bare listener in for a holder that is
// killed: it answers the handshake, takes a command and its connection
// drops, as the kernel drops a killed process's.
func TestHolderCrashEndsGuests(t *testing.T) {
	path := SocketPath(t.TempDir())
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		r.ReadString('\n')
		writeFrame(c, welcome{OK: true, Version: protocolVersion, Holder: &testHolder, Status: &browser.Status{State: browser.Connected}})
		r.ReadString('\n')
	}()
	c := dial(t, path, nil)
	_, err = c.Do(testCtx(t), browser.Command{Action: browser.Screenshot})
	if !errors.Is(err, ErrHolderGone) || !errors.Is(err, browser.ErrDisconnected) {
		t.Fatalf("call in flight: %v", err)
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done is open after the holder went away")
	}
}

// holdHelperEnv, when set to a socket path, makes the test binary a holder
// whose browser never answers, until it is killed. It prints "ready" once
// it listens and "doing" when a call reaches its browser.
const holdHelperEnv = "INFER_RELAY_TEST_HOLD"

func holdHelper(path string) {
	src := &fakeSource{do: func(ctx context.Context, _ browser.Command) (browser.Result, error) {
		fmt.Println("doing")
		<-ctx.Done()
		return browser.Result{}, ctx.Err()
	}}
	if _, err := Listen(path, func() string { return "secret" }, src, testHolder, nil); err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}

// TestHolderKilledEndsGuests kills a holder process with SIGKILL while a
// guest's call is in flight: the call fails with ErrHolderGone at once,
// Done closes, and the socket file it left is taken over by the next
// holder.
func TestHolderKilledEndsGuests(t *testing.T) {
	path := SocketPath(t.TempDir())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), holdHelperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewReader(out)
	if line, err := lines.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the holder did not start: %q %v", line, err)
	}
	c := dial(t, path, nil)
	if c.Holder() != testHolder {
		t.Fatalf("holder %+v", c.Holder())
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.Do(testCtx(t), browser.Command{Action: browser.Screenshot})
		errc <- err
	}()
	if line, err := lines.ReadString('\n'); err != nil || line != "doing\n" {
		t.Fatalf("the holder did not take the call: %q %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrHolderGone) || !errors.Is(err, browser.ErrDisconnected) {
			t.Fatalf("call in flight: %v, want ErrHolderGone", err)
		}
	case <-time.After(guard):
		t.Fatal("the call outlived its holder")
	}
	select {
	case <-c.Done():
	case <-time.After(guard):
		t.Fatal("Done stayed open after the holder was killed")
	}
	cmd.Wait()
	next, err := Listen(path, func() string { return "secret" }, &fakeSource{}, testHolder, nil)
	if err != nil {
		t.Fatalf("taking over the killed holder's socket: %v", err)
	}
	next.Close()
}

func TestGuestCloseEndsItsCalls(t *testing.T) {
	started := make(chan struct{})
	holderCtx := make(chan error, 1)
	h := startHolder(t, &fakeSource{do: func(ctx context.Context, _ browser.Command) (browser.Result, error) {
		close(started)
		<-ctx.Done()
		holderCtx <- ctx.Err()
		return browser.Result{}, ctx.Err()
	}})
	c := dial(t, h.path, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Do(testCtx(t), browser.Command{Action: browser.Read, Selector: "h1"})
		errc <- err
	}()
	<-started
	c.Close()
	if err := <-errc; !errors.Is(err, ErrHolderGone) {
		t.Fatalf("call in flight at Close: %v", err)
	}
	if err := <-holderCtx; err == nil {
		t.Error("the holder's call outlived its guest")
	}
}

func TestOversizedFramesAreRefused(t *testing.T) {
	h := startHolder(t, &fakeSource{do: func(_ context.Context, cmd browser.Command) (browser.Result, error) {
		if cmd.Action == browser.Screenshot {
			return browser.Result{Image: make([]byte, maxFrame), ImageMIME: "image/png"}, nil
		}
		return browser.Result{Title: "ok"}, nil
	}})
	c := dial(t, h.path, nil)
	ctx := testCtx(t)
	// A result too big to pass on is an error, and the guest stays.
	_, err := c.Do(ctx, browser.Command{Action: browser.Screenshot})
	if err == nil || !strings.Contains(err.Error(), "too big") {
		t.Fatalf("huge screenshot: %v", err)
	}
	// So is a command too big to send.
	_, err = c.Do(ctx, browser.Command{Action: browser.Type, Selector: "textarea", Text: strings.Repeat("x", maxFrame)})
	if err == nil || !strings.Contains(err.Error(), "too big") {
		t.Fatalf("huge command: %v", err)
	}
	if _, err := c.Do(ctx, browser.Command{Action: browser.Tabs}); err != nil {
		t.Fatalf("after the refusals: %v", err)
	}
	// A guest that sends a line past the limit anyway is dropped without
	// the holder reading it all into memory; the others go on.
	raw := rawGuest(t, h.path)
	go func() {
		chunk := []byte(strings.Repeat("y", 1<<20))
		for range maxFrame>>20 + 2 {
			if _, err := raw.Write(chunk); err != nil {
				return
			}
		}
	}()
	expectHangUp(t, raw)
	waitFor(t, func() bool { return strings.Contains(h.logs.String(), "longer than the relay allows") })
	if _, err := c.Do(ctx, browser.Command{Action: browser.Tabs}); err != nil {
		t.Fatalf("another guest after the drop: %v", err)
	}
}

func TestGarbageIsDropped(t *testing.T) {
	h := startHolder(t, nil)
	c := dial(t, h.path, nil)
	// Garbage for a hello is refused like a wrong token.
	conn, err := net.Dial("unix", h.path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(guard))
	fmt.Fprintln(conn, "GET / HTTP/1.1")
	var w welcome
	line, _ := bufio.NewReader(conn).ReadBytes('\n')
	if json.Unmarshal(line, &w) != nil || w.OK || w.Error == "" {
		t.Fatalf("garbage hello answered %q", line)
	}
	// Garbage after the handshake drops that guest alone.
	for _, junk := range []string{"not json", `{"id":0,"cmd":{}}`, `{"id":5}`, `[1,2,3]`} {
		raw := rawGuest(t, h.path)
		fmt.Fprintln(raw, junk)
		expectHangUp(t, raw)
	}
	waitFor(t, func() bool { return strings.Count(h.logs.String(), "dropped a guest") == 4 })
	if _, err := c.Do(testCtx(t), browser.Command{Action: browser.Tabs}); err != nil {
		t.Fatalf("another guest after the garbage: %v", err)
	}
}

func TestSilentConnectionIsDroppedAtTheHandshakeDeadline(t *testing.T) {
	// Put back after the holder below has closed (cleanups run last first).
	old := handshakeTimeout
	t.Cleanup(func() { handshakeTimeout = old })
	handshakeTimeout = 50 * time.Millisecond
	h := startHolder(t, nil)
	conn, err := net.Dial("unix", h.path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Half a hello, then nothing.
	fmt.Fprint(conn, `{"token":"sec`)
	expectHangUp(t, conn)
	waitFor(t, func() bool { return strings.Contains(h.logs.String(), "did not complete the handshake") })
}

func TestOtherVersionIsRefusedWithAReason(t *testing.T) {
	h := startHolder(t, nil)
	conn, err := net.Dial("unix", h.path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(guard))
	writeFrame(conn, hello{Token: "secret", Version: protocolVersion + 1})
	var w welcome
	line, _ := bufio.NewReader(conn).ReadBytes('\n')
	if json.Unmarshal(line, &w) != nil || w.OK || !strings.Contains(w.Error, "restart") {
		t.Fatalf("another version answered %q", line)
	}
}

// rawGuest is a connection past the handshake that speaks only what the
// test writes, and reads nothing unless the test does.
func rawGuest(t *testing.T, path string) net.Conn {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(guard))
	if err := writeFrame(conn, hello{Token: "secret", Version: protocolVersion}); err != nil {
		t.Fatal(err)
	}
	// Read the welcome byte by byte, so nothing after it is taken.
	b := make([]byte, 1)
	for {
		if _, err := conn.Read(b); err != nil {
			t.Fatalf("welcome: %v", err)
		}
		if b[0] == '\n' {
			break
		}
	}
	conn.SetDeadline(time.Time{})
	return conn
}

// expectHangUp reads conn until the holder closes it.
func expectHangUp(t *testing.T, conn net.Conn) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(guard))
	buf := make([]byte, 4096)
	for {
		_, err := conn.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the holder kept the connection")
		}
		return
	}
}

// leaveStaleSocket makes the socket file a dead holder leaves in dir.
func leaveStaleSocket(t *testing.T, dir string) string {
	t.Helper()
	path := SocketPath(dir)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	return path
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
