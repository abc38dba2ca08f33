package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/llm"
)

// textOutput is the readable format: the answer streams to stdout as it
// arrives, tool calls and their results are one line each, and everything
// that is about the run rather than its answer (reasoning, approvals) goes
// to stderr, so `infer headless PROMPT > answer.txt` keeps only the answer
// and the tool lines.
type textOutput struct {
	out, errOut   io.Writer
	showReasoning bool
	// dim is set when stderr is a terminal that accepts colour.
	dim bool

	midLine       bool // stdout's last byte was not a newline
	reasoningOpen bool
}

func newTextOutput(out, errOut io.Writer, showReasoning bool) *textOutput {
	return &textOutput{out: out, errOut: errOut, showReasoning: showReasoning, dim: colourTerminal(errOut)}
}

// colourTerminal reports whether w is a terminal and NO_COLOR is unset.
func colourTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (t *textOutput) write(s string) error {
	if s == "" {
		return nil
	}
	t.midLine = !strings.HasSuffix(s, "\n")
	_, err := io.WriteString(t.out, s)
	return err
}

// line writes s on a line of its own.
func (t *textOutput) line(s string) error {
	if t.midLine {
		if err := t.write("\n"); err != nil {
			return err
		}
	}
	return t.write(s + "\n")
}

func (t *textOutput) note(format string, args ...any) error {
	return t.toStderr(fmt.Sprintf(format+"\n", args...))
}

// toStderr writes s to stderr after flushing what stdout holds, so that on
// a terminal the two streams appear in the order things happened.
func (t *textOutput) toStderr(s string) error {
	if f, ok := t.out.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			return err
		}
	}
	_, err := io.WriteString(t.errOut, s)
	return err
}

func (t *textOutput) runStarted(threadID, runID string) error { return nil }

// text streams the answer. It comes from the model (and, through it, from
// tool output), so its control characters are escaped; its newlines and
// tabs are its layout and stay.
func (t *textOutput) text(_, delta string) error { return t.write(termSafeText(delta)) }

func (t *textOutput) textEnd(string) error {
	if t.midLine {
		return t.write("\n")
	}
	return nil
}

func (t *textOutput) reasoning(_, delta string) error {
	if !t.showReasoning {
		return nil
	}
	var b strings.Builder
	if !t.reasoningOpen {
		t.reasoningOpen = true
		b.WriteString("thinking: ")
	}
	// Only the escapes infer adds for dimming may reach the terminal raw.
	delta = termSafeText(delta)
	if t.dim {
		b.WriteString("\x1b[2m" + delta + "\x1b[22m")
	} else {
		b.WriteString(delta)
	}
	return t.toStderr(b.String())
}

func (t *textOutput) reasoningEnd(string) error {
	if !t.reasoningOpen {
		return nil
	}
	t.reasoningOpen = false
	return t.toStderr("\n")
}

// toolCall writes the call on one line; the name and arguments come from
// the model, so they are escaped for a single line.
func (t *textOutput) toolCall(_, name, args string) error {
	name = termSafeLine(name)
	if a := compactArgs(args); a != "" {
		return t.line("→ " + name + " " + termSafeLine(a))
	}
	return t.line("→ " + name)
}

// compactArgs renders tool arguments on one short line; an empty object
// renders as nothing.
func compactArgs(args string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(args)); err != nil {
		return shorten(strings.Join(strings.Fields(args), " "), 200)
	}
	if s := b.String(); s != "{}" {
		return shorten(s, 200)
	}
	return ""
}

// toolResult writes the outcome and the first line of the tool's output,
// escaped: a command's output may hold anything, terminal escapes included.
func (t *textOutput) toolResult(r toolOutcome) error {
	mark := "✗"
	if r.OK {
		mark = "✓"
	}
	name := termSafeLine(r.Name)
	if name == "" {
		name = "tool"
	}
	if r.Duration > 0 {
		name += " (" + shortDuration(r.Duration) + ")"
	}
	return t.line(mark + " " + name + ": " + termSafeLine(expandTabs(firstLine(r.Output, 200))))
}

// tabWidth is the distance between the tab stops expandTabs uses, a
// terminal's default.
const tabWidth = 8

// expandTabs replaces each tab of a one-line summary with the spaces up to
// the next tab stop, counted from the start of s. termSafeLine would show
// a tab as \t, which reads as a mistake in a command's columns; spaces
// keep the columns and cannot move the line anywhere.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := tabWidth - col%tabWidth
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// approvalOpened tells the person on stderr what is asking and why. The
// call, the reason and the judge's words come from the model or the tool,
// so each is escaped for its one line.
func (t *textOutput) approvalOpened(a session.Approval, answerable bool) error {
	what := termSafeLine(a.Call.Name)
	if args := compactArgs(a.Call.Args); args != "" {
		what += " " + termSafeLine(args)
	}
	msg := "? Approval needed: " + what
	if a.Why != "" {
		msg += "\n  why: " + termSafeLine(expandTabs(a.Why))
	}
	if a.Sandbox != "" {
		msg += "\n  sandbox: " + a.Sandbox
	}
	if a.JudgeReason != "" {
		msg += "\n  judge: " + termSafeLine(a.JudgeReason)
	}
	if answerable {
		msg += "\n  answer on stdin: y to approve, n to reject (or an approval_response JSON line with request_id " + a.ID + ")"
	}
	return t.note("%s", msg)
}

// approvalResolved tells the person on stderr how an approval was answered;
// a rejection's reason may come from the panel, so it is escaped.
func (t *textOutput) approvalResolved(a session.Approval) error {
	msg := "  " + decisionWord(a.Decision) + " " + termSafeLine(approvedBy(a.By))
	if a.Decision.Reason != "" {
		msg += ": " + termSafeLine(expandTabs(a.Decision.Reason))
	}
	return t.note("%s", msg)
}

func (t *textOutput) usage(llm.Usage) error { return nil }

// ended closes the last line. The run's error, if any, is the command's
// error, which the caller prints to stderr once.
func (t *textOutput) ended(runEnd) error {
	if t.reasoningOpen {
		if err := t.reasoningEnd(""); err != nil {
			return err
		}
	}
	if t.midLine {
		return t.write("\n")
	}
	return nil
}
