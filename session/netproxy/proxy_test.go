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
	"strings"
	"sync"
	"testing"
)

// upstream stands for a host on the internet (another loopback address).
func upstream(t *testing.T, ip string) string {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s%s", r.Host, r.URL.Path)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// recorder is a decider that allows the hosts in allow and records every
// question.
type recorder struct {
	mu    sync.Mutex
	allow map[string]bool
	asked []Dest
}

func (r *recorder) decide(_ context.Context, d Dest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, d)
	if r.allow[d.Host] {
		return nil
	}
	return errors.New("infer blocked the connection to " + d.String())
}

func startProxy(t *testing.T, r *recorder) *Proxy {
	t.Helper()
	p, err := Start(r.decide)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dialProxy(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", p.Socket())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestARefusedConnectSaysWhyInItsStatusLine: tools that print only the
// status line still show the decider's words.
func TestARefusedConnectSaysWhyInItsStatusLine(t *testing.T) {
	r := &recorder{}
	p := startProxy(t, r)
	target := upstream(t, "127.0.0.2")
	c := dialProxy(t, p)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Status, "infer blocked the connection to "+target) || !strings.Contains(string(body), target) {
		t.Fatalf("status %q body %q", resp.Status, body)
	}
	if len(r.asked) != 1 || !r.asked[0].Loopback || r.asked[0].Host != "127.0.0.2" {
		t.Fatalf("asked %+v, want 127.0.0.2 marked loopback", r.asked)
	}
}

// TestAKeptAliveConnectionCannotReuseOneHostsDecision: after a plain
// request the proxy closes the connection, so a second request for
// another host on it is never sent anywhere.
func TestAKeptAliveConnectionCannotReuseOneHostsDecision(t *testing.T) {
	allowed := upstream(t, "127.0.0.2")
	other := upstream(t, "127.0.0.3")
	r := &recorder{allow: map[string]bool{"127.0.0.2": true}}
	p := startProxy(t, r)
	c := dialProxy(t, p)
	fmt.Fprintf(c, "GET http://%s/a HTTP/1.1\r\nHost: %s\r\n\r\nGET http://%s/b HTTP/1.1\r\nHost: %s\r\n\r\n", allowed, allowed, other, other)
	all, _ := io.ReadAll(c)
	if !strings.Contains(string(all), "hello from "+allowed+"/a") {
		t.Fatalf("the allowed request was not answered: %q", all)
	}
	if strings.Contains(string(all), "hello from "+other) {
		t.Fatalf("the second host was reached on the first one's decision: %q", all)
	}
}

// TestANameForThisMachineIsLoopback: a name that resolves to loopback is
// put again as the person's own service (after it was allowed as a name),
// and is then dialled at the address checked.
func TestANameForThisMachineIsLoopback(t *testing.T) {
	target := upstream(t, "127.0.0.2")
	_, port, _ := net.SplitHostPort(target)
	r := &recorder{allow: map[string]bool{"rebind.example": true}}
	p := startProxy(t, r)
	p.resolve = func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
	}
	c := dialProxy(t, p)
	fmt.Fprintf(c, "GET http://rebind.example:%s/x HTTP/1.1\r\nHost: rebind.example:%s\r\n\r\n", port, port)
	all, _ := io.ReadAll(c)
	if len(r.asked) != 2 || r.asked[0].Loopback || !r.asked[1].Loopback {
		t.Fatalf("asked %+v, want rebind.example as a name, then marked loopback", r.asked)
	}
	if !strings.Contains(string(all), "hello from rebind.example") {
		t.Fatalf("the allowed name was not reached at its checked address: %q", all)
	}
}

// TestARefusedNameIsNeverLookedUp: the lookup itself would carry the name
// to whoever serves its domain (secret.attacker.example), so a name is
// decided on first and looked up only once it is allowed.
func TestARefusedNameIsNeverLookedUp(t *testing.T) {
	r := &recorder{allow: map[string]bool{}}
	p := startProxy(t, r)
	var looked []string
	var mu sync.Mutex
	p.resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
		mu.Lock()
		defer mu.Unlock()
		looked = append(looked, host)
		return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
	}
	for _, req := range []string{
		"GET http://s3cr3t.attacker.example/ HTTP/1.1\r\nHost: s3cr3t.attacker.example\r\n\r\n",
		"CONNECT s3cr3t2.attacker.example:443 HTTP/1.1\r\nHost: s3cr3t2.attacker.example:443\r\n\r\n",
	} {
		c := dialProxy(t, p)
		fmt.Fprint(c, req)
		all, _ := io.ReadAll(c)
		if !strings.Contains(string(all), "403") {
			t.Fatalf("%q: got %q, want a refusal", req, all)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(looked) != 0 {
		t.Fatalf("refused names were looked up: %q", looked)
	}
}

// TestTheMachinesOwnAddressesAreItsOwn: a name that resolves to one of
// this machine's interface addresses (its LAN address, say) reaches the
// services listening on every address, so it counts as the machine's own
// like loopback does, and a wildcard that allowed the name is not enough.
func TestTheMachinesOwnAddressesAreItsOwn(t *testing.T) {
	var own netip.Addr
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, ia := range ifaddrs {
		if p, err := netip.ParsePrefix(ia.String()); err == nil && !p.Addr().IsLoopback() {
			own = p.Addr()
			break
		}
	}
	if !own.IsValid() {
		t.Skip("this machine has no address but loopback")
	}
	if !isThisMachine(own) || isThisMachine(netip.MustParseAddr("192.0.2.77")) {
		t.Fatalf("isThisMachine(%s) = %v, isThisMachine(192.0.2.77) = %v", own, isThisMachine(own), isThisMachine(netip.MustParseAddr("192.0.2.77")))
	}
	r := &recorder{allow: map[string]bool{"dev1.corp.example": true}}
	p := startProxy(t, r)
	p.resolve = func(context.Context, string) ([]netip.Addr, error) { return []netip.Addr{own}, nil }
	c := dialProxy(t, p)
	fmt.Fprint(c, "GET http://dev1.corp.example:9/ HTTP/1.1\r\nHost: dev1.corp.example:9\r\n\r\n")
	_, _ = io.ReadAll(c)
	if len(r.asked) != 2 || !r.asked[1].Loopback {
		t.Fatalf("asked %+v, want dev1.corp.example put again as this machine's", r.asked)
	}
}
