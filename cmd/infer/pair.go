package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/session/config"
)

// statusTimeout bounds the whole /status probe: a local server that takes
// longer is not answering. The bridge holds back its answer to a wrong
// token for up to bridge.MaxAuthDelay (an extension that keeps retrying an
// old token after `infer init --rotate-token` causes exactly that), and
// that answer is the diagnosis pair exists to give, so it is waited for.
const statusTimeout = bridge.MaxAuthDelay + time.Second

func newPairCmd() *cobra.Command {
	var showToken bool
	var port int
	cmd := &cobra.Command{
		Use:   "pair",
		Short: "Show the extension's connection settings and whether it is connected",
		Long: `Show what to enter in the browser extension's options (port and token, the
token masked unless --show-token), then ask a running infer on that port
whether an extension is connected right now.

The port is extension.port from browser_use.yaml. An infer started with
--port listens elsewhere: ask it with infer pair --port N, or type /pair in it.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			portSet := cmd.Flags().Changed("port")
			if portSet && (port < 1 || port > 65535) {
				return usageError{fmt.Errorf("--port %d is out of range: use 1-65535", port)}
			}
			return runPair(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), showToken, port, portSet)
		},
	}
	cmd.Flags().BoolVar(&showToken, "show-token", false, "print the token in full (it is a secret: mind your scrollback)")
	cmd.Flags().IntVar(&port, "port", 0, "ask the infer on this port (one started with --port) instead of extension.port")
	return cmd
}

// serverStatus is the JSON that GET /status answers on the bridge port.
type serverStatus struct {
	Connected        bool   `json:"connected"`
	ExtensionVersion string `json:"extension_version"`
	// Since is RFC 3339; kept as text so a missing or odd value does not
	// spoil the rest of the report.
	Since         string     `json:"since"`
	RTTMillis     float64    `json:"rtt_ms"`
	LastRejection *rejection `json:"last_rejection"`
	Port          int        `json:"port"`
	Project       string     `json:"project"`
	Flapping      *flapping  `json:"flapping"`
}

// rejection is the last connection attempt infer refused.
type rejection struct {
	At     string `json:"at"`
	Reason string `json:"reason"`
	// Kind is "token" for a wrong, missing or outdated token; an infer
	// from before kinds were reported sends none.
	Kind string `json:"kind"`
}

// flapping is set while two extensions with one token replace each other.
type flapping struct {
	Replaced      int `json:"replaced"`
	WindowSeconds int `json:"window_s"`
}

func runPair(ctx context.Context, out, errOut io.Writer, showToken bool, portFlag int, portSet bool) error {
	home, err := homeDir(ctx)
	if err != nil {
		return err
	}
	path := config.BrowserUsePath(home)
	b, warnings, err := config.LoadBrowserUse(path)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(errOut, "warning: %s\n", w)
	}
	port := b.Extension.Port
	if portSet {
		port = portFlag
		b.Extension.Port = port // the URL below is this infer's
	}

	token := config.MaskToken(b.Extension.Token) + "  (run with --show-token to print it in full)"
	if showToken {
		token = b.Extension.Token
	}
	fmt.Fprintf(out, "Extension settings (from %s):\n", config.DisplayPath(path))
	fmt.Fprintf(out, "  URL:    %s\n", b.WSURL())
	fmt.Fprintf(out, "  Port:   %d\n", port)
	fmt.Fprintf(out, "  Token:  %s\n\n", token)

	if !b.Enabled {
		fmt.Fprintf(out, "Status: browser use is off (enabled: false). Set enabled: true in %s and restart infer.\n", config.DisplayPath(path))
		return nil
	}
	st, code, err := fetchStatus(ctx, port, b.Extension.Token)
	reportStatus(out, port, st, code, err)
	return nil
}

// fetchStatus asks the bridge on port for its status. It returns the HTTP
// status code, or an error when nothing usable answered.
func fetchStatus(ctx context.Context, port int, token string) (serverStatus, int, error) {
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	url := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + "/status"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return serverStatus{}, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	// A private transport: no proxy for a loopback call, and nothing left
	// idle once we return.
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return serverStatus{}, 0, err
	}
	defer resp.Body.Close()
	var st serverStatus
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&st); err != nil {
			return serverStatus{}, resp.StatusCode, errNotInfer
		}
	}
	return st, resp.StatusCode, nil
}

// errNotInfer means the port answered HTTP, but not as infer does.
var errNotInfer = errors.New("the answer is not infer's status")

func reportStatus(out io.Writer, port int, st serverStatus, code int, err error) {
	switch {
	case err != nil && errors.Is(err, syscall.ECONNREFUSED):
		fmt.Fprintf(out, "Status: infer is not running on port %d.\n", port)
		fmt.Fprintln(out, "  Start it in your project with `infer` (or `infer serve`), then click Connect in the extension.")
		fmt.Fprintln(out, "  An infer started with --port listens elsewhere: type /pair in it, or run infer pair --port N.")
	case err != nil && isTimeout(err):
		fmt.Fprintf(out, "Status: nothing answered on port %d within %s.\n", port, statusTimeout)
		fmt.Fprintln(out, "  infer may be stuck, or another program holds the port: restart infer, or pick another port in browser_use.yaml.")
	case errors.Is(err, errNotInfer), err == nil && code == http.StatusNotFound:
		fmt.Fprintf(out, "Status: another program answers on port %d; it is not infer.\n", port)
		fmt.Fprintln(out, "  Stop it, or set a free extension.port in browser_use.yaml and in the extension's options.")
	case err != nil:
		fmt.Fprintf(out, "Status: could not ask port %d: %v\n", port, err)
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		fmt.Fprintf(out, "Status: something answers on port %d but refused this token.\n", port)
		fmt.Fprintln(out, "  After `infer init --rotate-token` a running infer takes the new token within a few seconds: try again.")
		fmt.Fprintln(out, "  If it still refuses, it is another infer (another INFER_HOME) or an older one: restart infer.")
	case code != http.StatusOK:
		fmt.Fprintf(out, "Status: port %d answered with HTTP %d, which infer never sends; restart infer.\n", port, code)
	case st.Connected:
		fmt.Fprintf(out, "Status: an extension is connected.\n")
		if st.ExtensionVersion != "" {
			fmt.Fprintf(out, "  Version:     %s\n", st.ExtensionVersion)
		}
		if since := describeTime(st.Since); since != "" {
			fmt.Fprintf(out, "  Since:       %s\n", since)
		}
		fmt.Fprintf(out, "  Round trip:  %s ms\n", strconv.FormatFloat(st.RTTMillis, 'f', -1, 64))
		if f := st.Flapping; f != nil && f.Replaced > 0 {
			fmt.Fprintf(out, "  ⚠ %s.\n", bridge.FlapWarning(f.Replaced, time.Duration(f.WindowSeconds)*time.Second))
		}
	default:
		fmt.Fprintln(out, "Status: infer is running, but no extension is connected.")
		fmt.Fprintf(out, "  Open the extension's options, check the port (%d) and the token, then click Connect.\n", port)
		if r := st.LastRejection; r != nil {
			fmt.Fprintln(out, "  "+describeRejection(*r))
		}
	}
}

// describeTime renders an RFC 3339 time in local time with how long ago
// it was; text that does not parse is shown as it came.
func describeTime(s string) string {
	if s == "" {
		return ""
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	if t.IsZero() {
		return "" // a server with no time to report
	}
	text := t.Local().Format("2006-01-02 15:04:05")
	if ago := time.Since(t).Truncate(time.Second); ago >= 0 {
		text += " (" + ago.String() + " ago)"
	}
	return text
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// describeRejection says in one line when and why infer last refused an
// extension. A token refusal gets the browser pane's wording, pointing at
// the token printed above rather than at this very command; any other
// refusal is shown with infer's own reason.
func describeRejection(r rejection) string {
	at := describeTime(r.At)
	if at == "" {
		at = "an unknown time"
	}
	if r.Kind == "token" && !strings.Contains(r.Reason, "token changed") {
		return "⚠ At " + at + " an extension tried a wrong token: copy extension.token from browser_use.yaml " +
			"into its options (the Token above)."
	}
	reason := strings.TrimSuffix(termtext.Line(r.Reason), ".")
	if reason == "" {
		reason = "no reason given"
	}
	return "⚠ At " + at + " infer refused an extension: " + reason + "."
}
