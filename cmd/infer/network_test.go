package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/config"
)

// listenAs stands for a host on the internet with a listener on another
// loopback address; it counts connections and answers HTTP.
func listenAs(t *testing.T, ip string) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			buf := make([]byte, 4096)
			c.Read(buf)
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nreached\n")
			c.Close()
		}
	}()
	return ln.Addr().String(), &n
}

// TestFromThePanelOnlyAllowedHostsAreReached: in infer serve there is no
// terminal, so a command the panel runs (unasked in auto mode, or with
// its own approval in standard mode) reaches a host only when
// network.allow names it, and otherwise is told which host and how.
func TestFromThePanelOnlyAllowedHostsAreReached(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	blocked, blockedHits := listenAs(t, "127.0.0.2")
	allowed, allowedHits := listenAs(t, "127.0.0.3")
	home := t.TempDir()
	if err := config.EnsureDir(home); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config.ConfigPath(home), []byte("network:\n  allow: [\"127.0.0.3\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := serveInProcess(t, home, "")
	s.setMode("auto")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.client.ToolRequest(ctx, "Bash", `{"command": "curl -sS -m 20 -d secret http://`+blocked+`/x; curl -sS -m 20 http://`+allowed+`/ok"}`)
	if err != nil {
		t.Fatal(err)
	}
	if blockedHits.Load() != 0 {
		t.Fatalf("a host not allowed was reached: %s", res.Output)
	}
	for _, want := range []string{"infer blocked the connection to " + blocked, "network.allow in ~/.infer/config.yaml", "reached"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("the output does not say %q:\n%s", want, res.Output)
		}
	}
	if allowedHits.Load() != 1 {
		t.Fatalf("the allowed host was reached %d times: %s", allowedHits.Load(), res.Output)
	}

	// Standard mode: the panel approves its own command, which runs
	// confined, and no network request is put to anyone.
	s.setMode("standard")
	done := make(chan string, 1)
	go func() {
		res, err := s.client.ToolRequest(context.Background(), "Bash", `{"command": "curl -sS -m 20 http://`+blocked+`/y | cat"}`)
		if err != nil {
			done <- err.Error()
			return
		}
		done <- res.Output
	}()
	a := s.nextApproval()
	if err := s.client.Approve(s.ctx(), a.RequestID); err != nil {
		t.Fatal(err)
	}
	select {
	case out := <-done:
		if blockedHits.Load() != 0 || !strings.Contains(out, "infer blocked the connection to "+blocked) {
			t.Fatalf("a panel-approved command reached a host not allowed, or was not told: %s", out)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the approved request never finished")
	}
}
