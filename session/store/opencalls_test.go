package store

import (
	"encoding/json"
	"os"
	"testing"
)

// mustHold holds conversation id for the rest of the test.
func mustHold(t testing.TB, s *Store, id string) {
	t.Helper()
	h, err := s.Hold(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Release)
}

// TestListCountsTheResultsARepairAdds writes what kill -9 during a tool
// call leaves (the person's message and the call, a summary that lags
// behind them, the killed holder's lock file, and sometimes a torn last
// line), and checks that the count `infer conversations` and the panel's
// list show is the number of messages that opening the conversation
// shows: it once said 2 where the repaired conversation had 3.
func TestListCountsTheResultsARepairAdds(t *testing.T) {
	for _, torn := range []string{"", `{"kind":"message","at":"2026-08-16T12:00:09Z","message":{"role":"assis`} {
		name := "whole lines"
		if torn != "" {
			name = "torn last line"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			killed, _ := openTest(t, dir)
			id := mustCreate(t, killed)
			mustAppend(t, killed, id, user("run it"))
			mustAppend(t, killed, id, callMsg("call_1"))
			if torn != "" {
				appendRaw(t, killed.Path(id), torn)
			}
			if m, ok := killed.loadMeta(id); !ok || m.MessageCount != 1 {
				t.Fatalf("the summary does not lag as a crash leaves it: %+v %v", m, ok)
			}
			// The lock file of a process that no longer exists.
			gone, err := json.Marshal(Holder{PID: deadPID(t), Command: "infer", Host: hostname(t)})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(killed.lockPath(id), gone, 0o600); err != nil {
				t.Fatal(err)
			}

			restarted, _ := openTest(t, dir)
			if got := listed(t, restarted, id).MessageCount; got != 3 {
				t.Errorf("before the repair the list says %d messages, want 3", got)
			}
			mustHold(t, restarted, id)
			c, answered, err := restarted.Recover(id)
			if err != nil || len(answered) != 1 {
				t.Fatalf("repair: %v %v", answered, err)
			}
			if len(c.Messages) != 3 {
				t.Fatalf("the repaired conversation has %d messages: %s", len(c.Messages), shape(c.Messages))
			}
			for _, s := range []*Store{restarted, killed} {
				if got := listed(t, s, id); got.MessageCount != len(c.Messages) || got.OpenCalls != 0 {
					t.Errorf("after the repair the list says %+v, the conversation has %d messages", got, len(c.Messages))
				}
			}
		})
	}
}

// TestListCountsARunningCallAsItIs: a call whose process is alive is
// running, and opening the conversation there shows it unanswered.
func TestListCountsARunningCallAsItIs(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	id := mustCreate(t, s)
	mustHold(t, s, id)
	mustAppend(t, s, id, user("run it"), callMsg("call_1", "call_2"))
	other, _ := openTest(t, dir)
	if got := listed(t, other, id); got.MessageCount != 2 || got.OpenCalls != 2 {
		t.Errorf("listed %+v, want 2 messages and 2 open calls", got)
	}
	if err := s.AppendToolResult(id, toolMsg("call_1", "done"), true); err != nil {
		t.Fatal(err)
	}
	if got := listed(t, other, id); got.MessageCount != 3 || got.OpenCalls != 1 {
		t.Errorf("listed %+v, want 3 messages and 1 open call", got)
	}
}

func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Skip("no host name:", err)
	}
	return h
}

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip("cannot start /bin/true:", err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return p.Pid
}
