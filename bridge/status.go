package bridge

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/infer-workspace/infer/session/browser"
)

// StatusReport is the JSON body of GET /status, which `infer pair` reads
// to tell whether an extension is connected to the running infer, and
// whether one was refused (a wrong token looks like a network failure on
// the extension's side).
type StatusReport struct {
	Connected        bool             `json:"connected"`
	ExtensionVersion string           `json:"extension_version"`
	Since            string           `json:"since"`
	RTTMS            int64            `json:"rtt_ms"`
	LastRejection    *RejectionReport `json:"last_rejection,omitempty"`
	Port             int              `json:"port"`
	// Project is the folder of the infer holding the bridge
	// (Options.Project); omitted when unknown.
	Project string `json:"project,omitempty"`
	// Flapping is set while two extensions with this token keep
	// replacing each other (see Options.FlapReplacements).
	Flapping *FlappingReport `json:"flapping,omitempty"`
}

// FlappingReport says how many times the live connection was replaced
// within the last WindowSeconds.
type FlappingReport struct {
	Replaced      int `json:"replaced"`
	WindowSeconds int `json:"window_s"`
}

// RejectionReport is the latest refused connection attempt.
type RejectionReport struct {
	At     string `json:"at"`
	Reason string `json:"reason"`
	// Kind is token (a wrong, missing or outdated token), origin, busy,
	// or hello (anything else wrong with the first frame).
	Kind string `json:"kind"`
}

// handleStatus answers GET /status for a caller holding the token. The
// token is required because the report says whether the person's browser
// is reachable, which a web page has no business learning.
func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !s.bearerMatches(r.Header.Get("Authorization")) {
		s.refusals.refused(refusedBearer, "bridge: refused /status: wrong or missing bearer token", "wrong or missing bearer token on /status", "remote", r.RemoteAddr)
		// Guessing the token here is slowed down like guessing it in a
		// browser_hello; the two share one count.
		if d := s.limiter.failure(time.Now()); d > 0 && s.enterPenalty() {
			defer s.leavePenalty()
			s.pause(d)
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="infer"`)
		http.Error(w, "unauthorized: send Authorization: Bearer <extension.token from browser_use.yaml>", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(s.statusReport())
}

// bearerMatches checks an Authorization header in constant time.
func (s *Server) bearerMatches(header string) bool {
	token, ok := strings.CutPrefix(header, "Bearer ")
	got := sha256.Sum256([]byte(token))
	match := subtle.ConstantTimeCompare(got[:], s.tokenDigest.Load()[:]) == 1
	return ok && token != "" && match
}

func (s *Server) statusReport() StatusReport {
	s.mu.Lock()
	st, rej := s.status, s.rejection
	s.mu.Unlock()
	rep := StatusReport{
		Connected:        st.State == browser.Connected,
		ExtensionVersion: st.ExtensionVersion,
		Since:            st.Since.UTC().Format(time.RFC3339),
		RTTMS:            st.RTT.Milliseconds(),
		Port:             s.port,
		Project:          s.opts.Project,
	}
	if rej != nil {
		rep.LastRejection = &RejectionReport{At: rej.at.UTC().Format(time.RFC3339), Reason: rej.reason, Kind: rej.kind}
	}
	if st.Flapping > 0 {
		rep.Flapping = &FlappingReport{Replaced: st.Flapping, WindowSeconds: int(s.opts.FlapWindow / time.Second)}
	}
	return rep
}
