package bridge

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/sim"
)

func TestStatusRequiresTheToken(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	for _, auth := range []string{
		"",
		"Bearer",
		"Bearer ",
		"Bearer wrong",
		"Bearer " + testToken + "x",
		"bearer " + testToken,
		"Basic " + testToken,
		testToken,
	} {
		if code, _ := statusBody(t, ts.Server, auth); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, code)
		}
	}
	code, rep := statusBody(t, ts.Server, "Bearer "+testToken)
	if code != http.StatusOK {
		t.Fatalf("status %d with the right token", code)
	}
	if rep.Connected || rep.Port != ts.Port() || rep.LastRejection != nil {
		t.Errorf("report before any connection = %+v", rep)
	}
	if _, err := time.Parse(time.RFC3339, rep.Since); err != nil {
		t.Errorf("since %q is not RFC 3339", rep.Since)
	}
}

func TestStatusReportsConnectionAndRejection(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	ws := mustDial(t, ts.Server)
	ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: "nope", ExtensionVersion: "1.12.1"}))
	readClose(t, ws)

	connectSim(t, ts, &sim.Minimal{})
	code, rep := statusBody(t, ts.Server, "Bearer "+testToken)
	if code != http.StatusOK || !rep.Connected || rep.ExtensionVersion != "sim-test" {
		t.Fatalf("report = %d %+v, want connected to sim-test", code, rep)
	}
	if rep.LastRejection == nil || !strings.Contains(rep.LastRejection.Reason, "wrong token") {
		t.Fatalf("last_rejection = %+v, want the wrong token attempt", rep.LastRejection)
	}
	if _, err := time.Parse(time.RFC3339, rep.LastRejection.At); err != nil {
		t.Errorf("last_rejection.at %q is not RFC 3339", rep.LastRejection.At)
	}
}

func TestStatusJSONShape(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	resp, body := rawRequestAuth(t, ts.Server, "Bearer "+testToken)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, key := range []string{`"connected":false`, `"extension_version":""`, `"since":"`, `"rtt_ms":0`, `"port":` + strconv.Itoa(ts.Port())} {
		if !strings.Contains(body, key) {
			t.Errorf("body %s lacks %s", body, key)
		}
	}
	if strings.Contains(body, "last_rejection") {
		t.Errorf("body %s has a last_rejection with none recorded", body)
	}
}

func TestStatusHostCheckAndMethod(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(ts.Port())+"/status", nil)
	req.Host = "evil.example:" + strconv.Itoa(ts.Port())
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := plainHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: status %d, want 403", resp.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(ts.Port())+"/status", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err = plainHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", resp.StatusCode)
	}
}

func rawRequestAuth(t *testing.T, srv *Server, auth string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(srv.Port())+"/status", nil)
	req.Header.Set("Authorization", auth)
	resp, err := plainHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, b.String()
}
