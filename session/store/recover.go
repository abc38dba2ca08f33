package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// UnfinishedCallText is the content of the tool result Recover records for
// a call whose result was never saved: infer stopped (a crash, a kill, a
// full disk) while the call ran. The result is recorded as failed.
const UnfinishedCallText = "infer stopped before this call finished"

// UnfinishedCallResult is the tool message that answers such a call.
func UnfinishedCallResult(callID string) Message {
	return Message{Role: RoleTool, ToolCallID: callID, Content: UnfinishedCallText}
}

// UnansweredCalls returns the tool calls in msgs that no later tool message
// answers, in the order they were made. A tool message answers the
// earliest unanswered call with its id, so that an id a model reused for a
// later call still counts as unanswered there.
func UnansweredCalls(msgs []Message) []ToolCall {
	var open []ToolCall
	for _, m := range msgs {
		switch {
		case m.Role == RoleAssistant:
			open = append(open, m.ToolCalls...)
		case m.Role == RoleTool && m.ToolCallID != "":
			for i, c := range open {
				if c.ID == m.ToolCallID {
					open = append(open[:i:i], open[i+1:]...)
					break
				}
			}
		}
	}
	return open
}

// Recover loads conversation id for the writer about to continue it. Every
// tool call that no tool message answers, which is what a crash during a
// tool call leaves, gets the failed result UnfinishedCallResult, appended
// to the transcript in one write: providers reject a history with an
// unanswered call, so without it every later turn would fail. answered
// lists the calls it answered; a conversation without such calls is loaded
// as Load does, and nothing is written.
//
// Call it only while holding the conversation (Hold): a call that another
// process is running is unanswered too, and must stay so.
func (s *Store) Recover(id string) (c Conversation, answered []string, err error) {
	c, err = s.Load(id)
	if err != nil || len(UnansweredCalls(c.Messages)) == 0 {
		return c, nil, err
	}
	if s.mem != nil {
		return s.recoverMemory(id)
	}
	c, answered, err = s.recoverFile(id)
	if errors.Is(err, fs.ErrNotExist) {
		return Conversation{}, nil, notFound(id)
	}
	if err != nil {
		return Conversation{}, nil, fmt.Errorf("saving conversation %s: %w", id, err)
	}
	return c, answered, nil
}

// unfinishedRecords are the records that answer calls.
func unfinishedRecords(calls []ToolCall) []record {
	failed := false
	recs := make([]record, 0, 2*len(calls))
	for _, call := range calls {
		m := UnfinishedCallResult(call.ID)
		recs = append(recs,
			record{Kind: kindMessage, Message: &m},
			record{Kind: kindToolResult, ToolCallID: call.ID, OK: &failed})
	}
	return recs
}

func callIDs(calls []ToolCall) []string {
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.ID
	}
	return ids
}

func (s *Store) recoverMemory(id string) (Conversation, []string, error) {
	s.mu.Lock()
	st := s.mem[id]
	if st == nil {
		s.mu.Unlock()
		return Conversation{}, nil, notFound(id)
	}
	calls := UnansweredCalls(st.messages)
	at := s.now().UTC()
	for _, r := range unfinishedRecords(calls) {
		r.At = at
		st.apply(&r)
	}
	s.mu.Unlock()
	c, err := s.Load(id)
	return c, callIDs(calls), err
}

// recoverFile answers the unanswered calls under the transcript's exclusive
// lock, having read it again under that lock: another store may have
// answered them since Load.
func (s *Store) recoverFile(id string) (Conversation, []string, error) {
	f, fi, err := openLockedStat(s.fs, s.Path(id), os.O_RDWR|os.O_APPEND, lockExclusive)
	if err != nil {
		return Conversation{}, nil, err
	}
	defer f.Close()
	size, err := s.repairTail(id, f, fi.Size())
	if err != nil {
		return Conversation{}, nil, err
	}
	data, err := readAll(f, size)
	if err != nil {
		return Conversation{}, nil, err
	}
	st := &state{keep: true}
	d := s.decode(id, data, st, fi.ModTime())
	calls := UnansweredCalls(st.messages)
	if len(calls) == 0 {
		return loaded(st, d), nil, nil
	}
	recs := unfinishedRecords(calls)
	at := s.now().UTC()
	for i := range recs {
		recs[i].At = at
	}
	out, err := encodeRecords(recs)
	if err != nil {
		return Conversation{}, nil, err
	}
	_, err = f.Write(out)
	if err == nil && s.sync {
		err = f.Sync()
	}
	if err != nil {
		// As in changeFile: keep only whole records.
		s.forget(id)
		f.Truncate(size)
		return Conversation{}, nil, err
	}
	for i := range recs {
		st.apply(&recs[i])
	}
	size += int64(len(out))
	k := known{file: fi, size: size, meta: st.meta, described: -1}
	if s.saveMeta(f, st.meta, size, out) {
		k.described = size
	}
	s.remember(id, k)
	return loaded(st, d), callIDs(calls), nil
}

// loaded is the Conversation a full read of a transcript produced.
func loaded(st *state, d damage) Conversation {
	msgs, moved := placeToolResults(st.messages)
	if msgs == nil {
		msgs = []Message{}
	}
	return Conversation{Meta: st.meta, Messages: msgs, ToolResults: st.results, Notices: placeNotices(st.notices, moved), SkippedLines: d.lines()}
}

// placeNotices keeps each notice after the message it followed in the
// file once placeToolResults has moved messages (moved maps a message's
// index in the file to its index in the conversation; nil: none moved).
func placeNotices(ns []Notice, moved []int) []Notice {
	if moved == nil {
		return ns
	}
	out := make([]Notice, len(ns))
	for i, n := range ns {
		if n.After > 0 && n.After <= len(moved) {
			n.After = moved[n.After-1] + 1
		}
		out[i] = n
	}
	return out
}

// placeToolResults moves each tool message that does not directly follow
// the calls it answers (after their other answers) to that place, keeping
// everything else in file order. Only recovered results can be out of
// place, and only in a transcript an older infer left (which went on
// appending messages after a call it never answered), or one that two
// processes wrote at once; every provider needs the answers right after
// the calls. It returns msgs itself when nothing moves, which is always
// for transcripts this infer writes. moved maps each message's index in
// msgs to its index in out; it is nil when nothing moved.
func placeToolResults(msgs []Message) (out []Message, moved []int) {
	// owner[i] is the index of the assistant message whose call the tool
	// message i answers (-1: it answers none, or is no tool message).
	var owner []int
	type call struct {
		id string
		at int
	}
	var open []call
	displaced := false
	run := -1 // the assistant message whose answers are being read
	for i, m := range msgs {
		switch {
		case m.Role == RoleAssistant && len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				open = append(open, call{c.ID, i})
			}
			run = i
		case m.Role == RoleTool && m.ToolCallID != "":
			for j, c := range open {
				if c.id != m.ToolCallID {
					continue
				}
				open = append(open[:j:j], open[j+1:]...)
				if c.at != run {
					displaced = true
				}
				if owner == nil {
					owner = make([]int, len(msgs))
					for k := range owner {
						owner[k] = -1
					}
				}
				owner[i] = c.at
				break
			}
		default:
			run = -1
		}
	}
	if !displaced {
		return msgs, nil
	}
	// Tool messages gather under the assistant message that made the call,
	// in file order; everything else keeps its place.
	answers := make(map[int][]int)
	for i := range msgs {
		if owner[i] >= 0 {
			answers[owner[i]] = append(answers[owner[i]], i)
		}
	}
	out = make([]Message, 0, len(msgs))
	moved = make([]int, len(msgs))
	for i, m := range msgs {
		if owner[i] >= 0 {
			continue
		}
		moved[i] = len(out)
		out = append(out, m)
		for _, j := range answers[i] {
			moved[j] = len(out)
			out = append(out, msgs[j])
		}
	}
	return out, moved
}
