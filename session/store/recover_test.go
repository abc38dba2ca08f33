package store

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func callMsg(ids ...string) Message {
	m := Message{Role: RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Type: "function", Function: FunctionCall{Name: "Bash", Arguments: `{"command":"sleep 100"}`}})
	}
	return m
}

func toolMsg(id, text string) Message { return Message{Role: RoleTool, ToolCallID: id, Content: text} }

// shape renders messages compactly: u:text, a[calls], t:id=text.
func shape(msgs []Message) string {
	var out []string
	for _, m := range msgs {
		switch m.Role {
		case RoleAssistant:
			var ids []string
			for _, c := range m.ToolCalls {
				ids = append(ids, c.ID)
			}
			out = append(out, "a["+strings.Join(ids, " ")+"]")
		case RoleTool:
			out = append(out, "t:"+m.ToolCallID+"="+m.Content)
		default:
			out = append(out, "u:"+m.Content)
		}
	}
	return strings.Join(out, " ")
}

func TestUnansweredCalls(t *testing.T) {
	msgs := []Message{user("go"), callMsg("a", "b"), toolMsg("a", "ok"), toolMsg("orphan", "?"),
		callMsg("x"), toolMsg("x", "ok"), callMsg("x")} // a model reused an id
	var got []string
	for _, c := range UnansweredCalls(msgs) {
		got = append(got, c.ID)
	}
	if !slices.Equal(got, []string{"b", "x"}) {
		t.Fatalf("UnansweredCalls = %q", got)
	}
	if len(UnansweredCalls(sampleTurn())) != 0 {
		t.Fatal("a complete turn has unanswered calls")
	}
}

// TestRecoverAnswersCallsACrashLeftOpen writes what `kill -9` during the
// second of two tool calls leaves (the first answered, the second not),
// and recovers it: once, durably, with a failed result for the second call
// only.
func TestRecoverAnswersCallsACrashLeftOpen(t *testing.T) {
	dir := t.TempDir()
	disk, _ := openTest(t, dir)
	for name, s := range map[string]*Store{"disk": disk, "memory": OpenMemory()} {
		t.Run(name, func(t *testing.T) {
			id := mustCreate(t, s)
			mustAppend(t, s, id, user("run both"), callMsg("call_1", "call_2"))
			if err := s.AppendToolResult(id, toolMsg("call_1", "done"), true); err != nil {
				t.Fatal(err)
			}
			lines := 0
			if s.Persistent() {
				lines = checkLines(t, s.Path(id))
			}

			c, answered, err := s.Recover(id)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(answered, []string{"call_2"}) {
				t.Fatalf("answered %q", answered)
			}
			want := "u:run both a[call_1 call_2] t:call_1=done t:call_2=" + UnfinishedCallText
			if got := shape(c.Messages); got != want {
				t.Fatalf("recovered\n got %s\nwant %s", got, want)
			}
			if ok, known := c.ToolResults["call_2"]; !known || ok {
				t.Fatalf("call_2 result %v, %v; want a recorded failure", ok, known)
			}
			if !c.ToolResults["call_1"] {
				t.Fatal("call_1's result changed")
			}
			if c.Meta.MessageCount != 4 {
				t.Fatalf("meta %+v", c.Meta)
			}

			// Done once: a second Recover, or a Load, finds nothing to do.
			again, answered, err := s.Recover(id)
			if err != nil || answered != nil || shape(again.Messages) != want {
				t.Fatalf("second Recover: %s, %q, %v", shape(again.Messages), answered, err)
			}
			if !s.Persistent() {
				return
			}
			if n := checkLines(t, s.Path(id)); n != lines+2 {
				t.Fatalf("%d lines after recovery, want %d + a message and its result", n, lines)
			}
			// Durable: another store reads the repaired file, and the
			// summary it lists agrees.
			other, _ := openTest(t, dir)
			if got := shape(mustLoad(t, other, id).Messages); got != want {
				t.Fatalf("reloaded %s", got)
			}
			list, err := other.List()
			if err != nil || len(list) == 0 {
				t.Fatal(list, err)
			}
			for _, m := range list {
				if m.ID == id && m.MessageCount != 4 {
					t.Fatalf("listed %+v", m)
				}
			}
		})
	}
}

// TestLoadPlacesLateResults recovers a transcript an older infer left: it
// went on appending the person's messages after a call it never answered.
// The recovered result is appended at the end of the file, yet loads right
// after the call, where providers need it.
func TestLoadPlacesLateResults(t *testing.T) {
	disk, _ := openTest(t, t.TempDir())
	for name, s := range map[string]*Store{"disk": disk, "memory": OpenMemory()} {
		t.Run(name, func(t *testing.T) {
			id := mustCreate(t, s)
			mustAppend(t, s, id, user("one"), callMsg("c1"), user("two"))
			if err := s.AppendNotice(id, Notice{Text: "after two"}); err != nil {
				t.Fatal(err)
			}
			mustAppend(t, s, id, user("three"))
			c, answered, err := s.Recover(id)
			if err != nil || !slices.Equal(answered, []string{"c1"}) {
				t.Fatalf("Recover: %q, %v", answered, err)
			}
			want := "u:one a[c1] t:c1=" + UnfinishedCallText + " u:two u:three"
			if got := shape(c.Messages); got != want {
				t.Fatalf("loaded\n got %s\nwant %s", got, want)
			}
			if got := shape(mustLoad(t, s, id).Messages); got != want {
				t.Fatalf("Load\n got %s\nwant %s", got, want)
			}
			// The notice stays after "two", which moved one place down.
			if len(c.Notices) != 1 || c.Notices[0].After != 4 {
				t.Fatalf("notices %+v", c.Notices)
			}
		})
	}
}

func TestRecoverOnAFullDiskChangesNothing(t *testing.T) {
	s, ffs, _ := openFaulty(t)
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("go"), callMsg("c1"))
	before := fileSize(t, s.Path(id))
	ffs.set(func(f *faultFS) { f.writeErr = syscall.ENOSPC })
	if _, _, err := s.Recover(id); !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), "saving conversation "+id) {
		t.Fatalf("Recover on a full disk = %v", err)
	}
	if got := fileSize(t, s.Path(id)); got != before {
		t.Fatalf("size %d, was %d", got, before)
	}
	ffs.set(func(f *faultFS) { f.writeErr = nil })
	if _, answered, err := s.Recover(id); err != nil || len(answered) != 1 {
		t.Fatalf("Recover once space was freed: %q, %v", answered, err)
	}
	if _, _, err := s.Recover("00000000-0000-4000-8000-000000000000"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Recover of an unknown id = %v", err)
	}
}
