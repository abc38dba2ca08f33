package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/tools"
)

// Front ends other than the terminal can change what the agent may do
// (set_mode) and run tools themselves (tool_request). The browser panel is
// one, and a web page can drive the extension, so the person must be able
// to see what it did: such an action becomes a notice in every front end
// (NoticePosted), a notice recorded in the active conversation (store.Notice,
// which the model never reads), and a line in the log.

// Bounds on what a notice or a log line quotes of a tool request: the
// arguments are the requester's, of any length.
const (
	maxQuotedArgs = 200
	maxQuotedName = 64
	maxQuotedID   = 64
)

// announced reports whether an action from origin is announced: the
// terminal's own (and those that name no origin, the TUI's) are what the
// person just did.
func announced(origin Origin) bool {
	return origin != "" && origin != tools.OriginTerminal
}

// originName names an origin in a sentence ("The browser panel …").
func originName(origin Origin) string {
	if origin == tools.OriginHeadless {
		return "headless run"
	}
	return origin.Label()
}

// runsWithoutAsking reports whether mode m runs commands without asking
// the person first (auto-with-judge asks a judge model instead).
func runsWithoutAsking(m tools.Mode) bool {
	return m == tools.Auto || m == tools.AutoWithJudge
}

// permissiveness orders the modes by how much runs without the person:
// plan changes nothing, standard asks, auto-with-judge asks a judge, auto
// asks nobody.
func permissiveness(m tools.Mode) int {
	switch m {
	case tools.Plan:
		return 0
	case tools.Standard:
		return 1
	case tools.AutoWithJudge:
		return 2
	case tools.Auto:
		return 3
	}
	return 0
}

// modeChanged reports a change of the agent mode from old to cur. A raise
// to a mode that runs commands without asking, made outside the terminal,
// is a warning: the person did not make it and may not be looking at the
// status bar.
func (w *Workspace) modeChanged(old, cur tools.Mode, origin Origin) {
	if !announced(origin) {
		w.log.Info("agent mode changed", "from", old, "to", cur, "origin", origin)
		return
	}
	raise := runsWithoutAsking(cur) && permissiveness(cur) > permissiveness(old)
	who := "The " + originName(origin)
	if !raise {
		w.log.Info("agent mode changed", "from", old, "to", cur, "origin", origin)
		w.notice(who+" switched the mode from "+string(old)+" to "+string(cur)+".", Info, origin)
		return
	}
	w.log.Warn("agent mode raised outside the terminal", "from", old, "to", cur, "origin", origin)
	what := "commands will run without asking"
	if cur == tools.AutoWithJudge {
		what = "commands will run without asking you when the judge model lets them"
	}
	w.notice(who+" switched the mode from "+string(old)+" to "+string(cur)+": "+what, Warn, origin)
}

// toolRequested announces a tool call a front end asked for (the panel's
// tool_request) before it runs, so that it shows up even while it waits for
// approval. It is a warning when the mode will run it without asking.
func (w *Workspace) toolRequested(id, name, args string, origin Origin, mode tools.Mode) {
	name = quote(name, maxQuotedName)
	quoted := quote(readableJSON(args), maxQuotedArgs)
	w.log.Info("tool requested outside the agent", "origin", origin, "id", quote(id, maxQuotedID), "tool", name, "args", quoted, "mode", mode)
	if !announced(origin) || outside(origin) {
		return // an outside call is shown as it runs instead
	}
	text := "The " + originName(origin) + " asked to run " + name
	level := Info
	if runsWithoutAsking(mode) {
		text += " in " + string(mode) + " mode"
		level = Warn
	}
	if quoted != "" {
		text += ": " + quoted
	}
	w.notice(text, level, origin)
}

// toolRequestDone logs how a requested tool call ended, so that the log
// says whether it ran, not only that it was asked for.
func (w *Workspace) toolRequestDone(id, name string, origin Origin, o tools.Outcome) {
	w.log.Info("requested tool call ended", "origin", origin, "id", quote(id, maxQuotedID), "tool", quote(name, maxQuotedName),
		"ok", o.Success, "denied", o.Denied, "approval", o.Approval, "duration", o.Duration.Round(time.Millisecond))
}

// readableJSON re-encodes JSON text without the escapes a requester may
// have used where none is needed (\u0026 for &, \u0069 for i), so that a
// notice reads as the command would run and a log search for it finds it.
// Anything that is not JSON is returned as it is.
func readableJSON(s string) string {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return s
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(v) != nil {
		return s
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// quote makes text a requester sent fit for a notice and a log line: one
// line without control characters, secret-looking words redacted, at most
// limit runes.
func quote(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == utf8.RuneError, unicode.IsControl(r) && !unicode.IsSpace(r):
			return -1
		case unicode.Is(unicode.Cf, r):
			return -1 // bidi overrides and other invisible formatting
		}
		return r
	}, s)
	s = config.RedactSecrets(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	runes := []rune(s)
	return string(runes[:limit-1]) + "…"
}

// notice shows text in every front end and records it in the active
// conversation, creating the conversation's store entry if it has none
// yet: the action it reports already happened, and the record must not
// depend on the person sending a message afterwards. A failure to record
// is logged; the notice is shown regardless.
//
// A conversation another process holds (shown read-only, see "One writer
// per conversation") is that process's to write: the notice is then only
// shown and logged.
func (w *Workspace) notice(text string, level Level, origin Origin) {
	w.mu.Lock()
	conv := w.conv
	w.mu.Unlock()
	w.noticeIn(conv, text, level, origin)
}

// noticeIn is notice for conv, which a turn that is not the active
// conversation's reports in. It is the one publisher of NoticePosted: a
// notice that is shown is recorded, or the reason it could not be is
// logged.
func (w *Workspace) noticeIn(conv *conversation, text string, level Level, origin Origin) {
	id := w.record(conv, text, level, origin)
	w.publish(NoticePosted{Conversation: id, Text: text, Level: level, Origin: origin})
}
