package main

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/infer-workspace/infer/bridge"
)

// TestPairAfterATokenRotationWhileAnExtensionRetries is the case `infer
// pair` is for: the token was rotated while infer ran, and an extension
// keeps retrying the new one, so infer holds back its answers to wrong
// tokens. pair must still get infer's refusal and say to restart infer,
// not report the held-back answer as a stuck server.
func TestPairAfterATokenRotationWhileAnExtensionRetries(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits out the bridge's penalty for wrong tokens")
	}
	srv, err := bridge.Listen(bridge.Options{Token: "the-token-infer-started-with-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(ctx) }()
	defer func() { cancel(); srv.Close(); <-served }()
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	token := pairHome(t, port) // the rotated token

	// The retries: the burst of wrong tokens answered at once, then four
	// more sent together, whose answers the server holds back longer each
	// time. They count as soon as they arrive, so pair's question is the
	// tenth failure and its answer the one held back longest.
	retry := func(wrote chan<- struct{}) {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+u.Port()+"/status", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if wrote != nil {
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				WroteRequest: func(httptrace.WroteRequestInfo) { wrote <- struct{}{} },
			}))
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	for range 5 {
		retry(nil)
	}
	var retries sync.WaitGroup
	wrote := make(chan struct{}, 4)
	for range 4 {
		retries.Add(1)
		go func() { defer retries.Done(); retry(wrote) }()
	}
	defer retries.Wait()
	for range 4 {
		<-wrote
	}
	out, _, code := infer(t, "pair")
	if code != 0 || !strings.Contains(out, "refused this token") || !strings.Contains(out, "restart infer") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
