// Package store keeps the workspace's conversations and its shared input
// history on disk, in files a person can read.
//
// # Layout
//
// A project's conversations live in one directory
// (<home>/projects/<slug>/conversations/), two files per conversation:
//
//   - <id>.jsonl, the conversation itself: JSON lines, one record per line
//     with a "kind" discriminator ("conversation" first, then "message",
//     "tool_result", "title", "pin", "notice"). It is only ever appended to, one write
//     per batch, so a crash can at worst leave an incomplete last line.
//   - <id>.meta.json, a summary (title, times, message count, pinned) plus
//     the size of the .jsonl it summarises and a fingerprint of the bytes
//     just before that size.
//
// and, while a process holds the conversation (see below), <id>.lock,
// which names that process.
//
// # Why a meta file per conversation rather than one index
//
// Listing must stay fast with thousands of conversations, so it must not
// read every transcript. A per-conversation summary keeps each write local
// to the conversation being written (no shared index for two processes to
// contend on or to corrupt together), and makes the summary a pure cache:
// every fact in it is derivable from the .jsonl. It is replaced atomically
// (temporary file and rename), and trusted when the size it records equals
// the .jsonl's current size. When the .jsonl has grown past that size and
// still holds the fingerprinted bytes there, only the records after it are
// read and folded into the summary; when it is missing, unreadable or does
// not match (a hand edit), it is rebuilt from the whole .jsonl. That is also
// why only the .jsonl is fsynced: a summary lost in a crash costs one
// rebuild, never data.
//
// Because a summary that is behind is cheap to bring up to date, it is not
// rewritten after every append. An agent's tool loop appends twice per tool
// call (the call, then its result with its outcome); those appends leave the
// summary behind for up to summaryEvery appends or summarySlack bytes, and
// anything else (a person's message, a final answer, a title, a pin) brings
// it up to date; so does List, which reads the summary files only. Meanwhile
// the store remembers the summary of each conversation it appended to,
// keyed to the .jsonl's identity and size, so that its next append reads
// nothing to know it.
//
// # Concurrency and failures
//
// Two infer processes may share a project. Every change takes an exclusive
// flock(2) on the conversation's .jsonl around the append and the summary
// update; reads take a shared lock. A store keeps the transcripts it appends
// to open between appends (see appender), and checks under each lock that
// the path still names the file it holds. A failed write (a full disk) is rolled
// back by truncating to the previous size and reported as
// "saving conversation <id>: <cause>"; nothing written before is touched.
// Readers skip unreadable lines and an incomplete last line with a warning,
// and the next append removes such a torn tail before writing.
//
// Conversation ids are canonical UUIDs; anything else is ErrNotFound, so an
// id can never name a path outside the directory.
//
// # One writer per conversation
//
// Appends are safe from any process, but two agents taking turns in one
// conversation are not: each builds its next model request on the history
// it has in memory, so their turns interleave and reuse tool call ids. The
// process that runs a conversation's turns therefore holds it (Hold): an
// exclusive, non-blocking flock on <id>.lock, which holds the holder's pid,
// command and host so that another process can say who has it. The kernel
// drops the lock when the holder closes it or dies, so a crash never leaves
// a conversation held; the holder deletes the file on release. Delete
// refuses a conversation another process holds. Where flock(2) does not
// exist, holding always succeeds (one process per project is assumed
// there, as for the appends).
//
// # Recovering an interrupted tool call
//
// A crash or kill while a tool runs leaves an assistant message whose tool
// calls have no results, and every provider rejects a history like that.
// Recover, which the holder calls when it resumes a conversation, appends
// a failed result ("infer stopped before this call finished") for each
// such call, once and durably. Loading places each tool result right
// after the calls it answers even when it was appended later (an older
// infer went on appending after an unanswered call).
//
// # Speed
//
// Resuming reads a transcript once and decodes it line by line with JSON
// v2 (github.com/go-json-experiment/json), which on the store's lines is
// more than twice as fast as encoding/json. A library decoder rather than
// a parser of the store's own keeps the code that reads people's data
// small and free of unsafe; decoding still costs several times the read
// (docs/performance.md has the figures). Writing stays with encoding/json,
// whose omitempty the record layout relies on.
//
// # Input history
//
// History, in the same package because it shares the file handling, is a
// file of JSON strings, one per line, so multi-line entries round-trip. It
// follows the same rules: appends under an exclusive lock, a torn last line
// skipped and repaired, and an atomic rewrite that keeps it bounded: to
// the newest 1000 entries and 1 MiB, with no entry over 64 KiB kept.
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
)

// ErrNotFound is returned for ids that name no stored conversation,
// including ids that are not UUIDs.
var ErrNotFound = errors.New("conversation not found")

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
	RoleSystem    = "system"
)

// Title sources, from weakest to strongest: a generated title replaces a
// preview, and nothing but the person replaces their own title.
const (
	TitlePreview   = "preview"
	TitleGenerated = "generated"
	TitleUser      = "user"
)

// Message is one conversation message in the OpenAI-style shape the browser
// extension reads. Content is always a string: the extension renders an
// array of parts as an empty bubble.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Reasoning  string     `json:"reasoning,omitempty"`
	// ProviderData is opaque state a provider needs back on the next
	// request (e.g. Anthropic's signed thinking blocks). It never reaches
	// the panel, which gets only the fields above.
	ProviderData map[string]string `json:"provider_data,omitempty"`
}

// ToolCall is an assistant's request to run a tool.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // always "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names a tool and carries its raw JSON arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Notice is a line for the person recorded in a conversation beside its
// messages: something a front end did that the person must be able to see
// later, such as the browser panel raising the agent mode or running a
// tool. Notices are kept out of Messages because those are what the model
// reads and what the panel receives; a notice must reach neither (its text
// may quote what a web page made the panel send).
type Notice struct {
	Text string `json:"text"`
	// Origin is the front end that caused it (tools.Origin's spelling).
	Origin string `json:"origin,omitempty"`
	// Warn marks a notice that needs the person's attention, so that no
	// reader has to recognise one by its text.
	Warn bool `json:"warn,omitempty"`
	// At is when it was recorded and After how many messages preceded it,
	// so a front end can show it in place; both are set on load.
	At    time.Time `json:"-"`
	After int       `json:"-"`
}

// Meta summarises a conversation for lists.
type Meta struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// TitleSource says where Title came from: TitlePreview, TitleGenerated,
	// TitleUser, or "" while the conversation has no title yet.
	TitleSource string    `json:"title_source,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	// UpdatedAt is the time of the last message or tool result; renaming
	// and pinning do not move it, so they do not reorder the list.
	UpdatedAt time.Time `json:"updated_at"`
	// MessageCount is how many messages the transcript holds; List adds
	// the results a resume will give OpenCalls when no process is left to
	// answer them, so that the count is what opening it shows.
	MessageCount int  `json:"message_count"`
	Pinned       bool `json:"pinned"`
	// OpenCalls counts the tool calls no stored result answers yet: a
	// running turn's, or those a killed process left, which Recover
	// answers. A count keeps Meta comparable; a tool message answering
	// no call, which only a hand edit writes, can make it one short.
	OpenCalls int `json:"open_calls,omitempty"`
}

// Conversation is a stored conversation in full.
type Conversation struct {
	Meta     Meta
	Messages []Message // never nil, so it encodes as [] for the panel
	// ToolResults maps a tool_call_id to whether that execution succeeded,
	// for the calls that have a recorded result.
	ToolResults map[string]bool
	// Notices are the conversation's notices in the order they were
	// recorded (see Notice).
	Notices []Notice
	// SkippedLines counts unreadable lines ignored while loading (garbage,
	// or an incomplete last line left by a crash).
	SkippedLines int
}

// Options tune a disk store. The zero value is right for production.
type Options struct {
	// FS performs file operations; nil means OS.
	FS FS
	// NoSync skips fsync. Appends are then durable only once the kernel
	// writes them back; nothing is ever left inconsistent. For tests and
	// benchmarks.
	NoSync bool
	// Warn receives problems that were recovered from (skipped lines,
	// rebuilt summaries); nil logs them with slog.
	Warn func(error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Store is a project's conversation store. It is safe for concurrent use,
// also by several processes sharing the directory.
type Store struct {
	dir  string
	fs   FS
	sync bool
	warn func(error)
	now  func() time.Time

	mu  sync.Mutex
	mem map[string]*state // non-nil only for a memory store

	knownMu sync.Mutex
	known   map[string]known // see recall

	holdMu sync.Mutex
	holds  map[string]*held // conversations this store holds, see Hold

	appMu sync.Mutex
	apps  map[string]*appender // transcripts kept open, see appenderFor
}

// Open opens (creating if needed) the conversation directory dir.
func Open(dir string, opts Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("opening conversation store: no directory given")
	}
	s := newStore(opts)
	s.dir = dir
	if err := s.fs.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("opening conversation store: %w", err)
	}
	return s, nil
}

// OpenMemory returns a store that keeps conversations in memory only
// (storage.enabled: false). List always returns an empty list, as the
// contract requires, but conversations created in this process can still be
// loaded and resumed.
func OpenMemory() *Store {
	s := newStore(Options{})
	s.mem = make(map[string]*state)
	return s
}

func newStore(opts Options) *Store {
	s := &Store{fs: opts.FS, sync: !opts.NoSync, warn: opts.Warn, now: opts.Now}
	if s.fs == nil {
		s.fs = OS
	}
	if s.warn == nil {
		s.warn = func(err error) { slog.Warn("conversation store", "problem", err) }
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Persistent reports whether conversations are written to disk.
func (s *Store) Persistent() bool { return s.mem == nil }

// Path returns the file holding conversation id, for showing to a person;
// it is "" for a memory store or an invalid id.
func (s *Store) Path(id string) string {
	if s.mem != nil || !validID(id) {
		return ""
	}
	return filepath.Join(s.dir, id+".jsonl")
}

func (s *Store) metaPath(id string) string {
	return filepath.Join(s.dir, id+".meta.json")
}

// validID accepts only canonical lowercase UUIDs (8-4-4-4-12 hex digits),
// which contain no path separators or dots.
func validID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

func notFound(id string) error {
	return fmt.Errorf("%w: %q", ErrNotFound, id)
}

// Create starts a new, empty conversation.
func (s *Store) Create() (Meta, error) {
	now := s.now().UTC()
	id := uuid.NewString()
	meta := Meta{ID: id, CreatedAt: now, UpdatedAt: now}
	if s.mem != nil {
		s.mu.Lock()
		s.mem[id] = &state{meta: meta, keep: true}
		s.mu.Unlock()
		return meta, nil
	}
	data, err := encodeRecords([]record{{Kind: kindConversation, At: now, ID: id, Version: formatVersion}})
	if err != nil {
		return Meta{}, fmt.Errorf("creating conversation: %w", err)
	}
	// The summary goes first, so the transcript never appears without one;
	// the transcript appears whole, through a rename.
	tail, err := fingerprint(nil, int64(len(data)), data)
	if err != nil {
		return Meta{}, fmt.Errorf("creating conversation: %w", err)
	}
	if err := s.writeMeta(meta, int64(len(data)), tail); err != nil {
		return Meta{}, fmt.Errorf("creating conversation: %w", err)
	}
	if err := writeFileAtomic(s.fs, s.Path(id), data, s.sync); err != nil {
		s.fs.Remove(s.metaPath(id))
		return Meta{}, fmt.Errorf("creating conversation: %w", err)
	}
	if s.sync {
		if err := syncDir(s.fs, s.dir); err != nil {
			return Meta{}, fmt.Errorf("creating conversation: %w", err)
		}
	}
	return meta, nil
}

// Append adds messages to conversation id, in one write. The first user
// message with text gives the conversation its preview title.
func (s *Store) Append(id string, msgs ...Message) error {
	for i, m := range msgs {
		switch m.Role {
		case RoleUser, RoleAssistant, RoleTool, RoleSystem:
		default:
			return fmt.Errorf("saving conversation %s: message %d has role %q; want user, assistant, tool or system", id, i+1, m.Role)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return s.change(id, func(Meta) []record {
		recs := make([]record, len(msgs))
		for i := range msgs {
			recs[i] = record{Kind: kindMessage, Message: &msgs[i]}
		}
		return recs
	})
}

// AppendToolResult adds a tool message together with the outcome of the
// call it answers (msg.ToolCallID), in one write: what a finished tool call
// saves, for the price of one append.
func (s *Store) AppendToolResult(id string, msg Message, ok bool) error {
	if msg.Role != RoleTool {
		return fmt.Errorf("saving conversation %s: a tool result needs a message with role %q, not %q", id, RoleTool, msg.Role)
	}
	if msg.ToolCallID == "" {
		return fmt.Errorf("saving conversation %s: tool result without a tool call id", id)
	}
	return s.change(id, func(Meta) []record {
		return []record{
			{Kind: kindMessage, Message: &msg},
			{Kind: kindToolResult, ToolCallID: msg.ToolCallID, OK: &ok},
		}
	})
}

// AppendNotice records a notice in conversation id (see Notice).
func (s *Store) AppendNotice(id string, n Notice) error {
	if strings.TrimSpace(n.Text) == "" {
		return fmt.Errorf("saving conversation %s: a notice without text", id)
	}
	return s.change(id, func(Meta) []record {
		return []record{{Kind: kindNotice, Notice: &n}}
	})
}

// Rename gives conversation id a title chosen by the person; generated
// titles never replace it.
func (s *Store) Rename(id, title string) error {
	title = strings.TrimSpace(title)
	if title == "" {
		return fmt.Errorf("renaming conversation %s: the title is empty", id)
	}
	return s.change(id, func(Meta) []record {
		return []record{{Kind: kindTitle, Title: title, Source: TitleUser}}
	})
}

// SetGeneratedTitle sets a model-generated title. It does nothing when the
// person has renamed the conversation, or when title is blank.
func (s *Store) SetGeneratedTitle(id, title string) error {
	title = strings.TrimSpace(title)
	return s.change(id, func(m Meta) []record {
		if title == "" || m.TitleSource == TitleUser || (m.TitleSource == TitleGenerated && m.Title == title) {
			return nil
		}
		return []record{{Kind: kindTitle, Title: title, Source: TitleGenerated}}
	})
}

// SetPinned pins or unpins conversation id.
func (s *Store) SetPinned(id string, pinned bool) error {
	return s.change(id, func(m Meta) []record {
		if m.Pinned == pinned {
			return nil
		}
		return []record{{Kind: kindPin, Pinned: &pinned}}
	})
}

// change appends the records decide returns, given the conversation's
// current summary, as one write under the conversation's exclusive lock.
func (s *Store) change(id string, decide func(Meta) []record) error {
	if !validID(id) {
		return notFound(id)
	}
	if s.mem != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		st := s.mem[id]
		if st == nil {
			return notFound(id)
		}
		recs := decide(st.meta)
		at := s.now().UTC()
		for i := range recs {
			recs[i].At = at
			if recs[i].Message != nil {
				m := cloneMessage(*recs[i].Message)
				recs[i].Message = &m
			}
			st.apply(&recs[i])
		}
		return nil
	}
	if err := s.changeFile(id, decide); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return notFound(id)
		}
		return fmt.Errorf("saving conversation %s: %w", id, err)
	}
	return nil
}

func (s *Store) changeFile(id string, decide func(Meta) []record) (err error) {
	a := s.appenderFor(id)
	a.mu.Lock()
	defer a.mu.Unlock()
	f, fi, err := a.lock(s.fs, s.Path(id))
	if err != nil {
		return err
	}
	// After a failure the file is closed, so the next append starts from
	// the path.
	defer func() { a.release(err == nil) }()
	k, ok := s.recall(id, fi)
	// behind says the summary file was found behind the transcript (or
	// unusable), which is then worth bringing up to date at once; end
	// holds the transcript bytes read to find out.
	behind, end := false, []byte(nil)
	if !ok {
		size, err := s.repairTail(id, f, fi.Size())
		if err != nil {
			return err
		}
		st, described, read, err := s.summary(id, f, size, fi.ModTime())
		if err != nil {
			return err
		}
		k = known{file: fi, size: size, meta: st.meta, described: described}
		behind, end = described != size, read
	}
	st := &state{meta: k.meta}
	recs := decide(st.meta)
	if len(recs) == 0 {
		if behind && s.saveMeta(f, st.meta, k.size, end) {
			k.described, k.pending = k.size, 0
		}
		s.remember(id, k)
		return nil
	}
	at := s.now().UTC()
	for i := range recs {
		recs[i].At = at
	}
	data, err := encodeRecords(recs)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && s.sync {
		err = f.Sync()
	}
	if err != nil {
		// Roll back a partial write so the file keeps only whole records.
		// If even that fails, readers skip the torn tail and the next
		// append, which must look at the file again, removes it.
		s.forget(id)
		f.Truncate(k.size)
		return err
	}
	for i := range recs {
		st.apply(&recs[i])
	}
	k.size += int64(len(data))
	k.meta = st.meta
	k.pending++
	if (behind || summaryDue(k, recs)) && s.saveMeta(f, st.meta, k.size, data) {
		k.described, k.pending = k.size, 0
	}
	s.remember(id, k)
	return nil
}

// When a summary file may lag behind its transcript: for at most
// summaryEvery appends, or summarySlack bytes, of records a running agent
// turn writes in bursts.
const (
	summaryEvery = 32
	summarySlack = 256 << 10
)

// summaryDue reports whether the summary file should be brought up to
// date after an append of recs, which left the transcript as k describes.
// Tool calls, tool messages and their outcomes come in bursts while an
// agent works, and a summary that is behind is cheap to catch up (see the
// package documentation); anything else, a person's message or the final
// answer in particular, usually leaves the conversation at rest, which is
// when a summary is worth writing.
func summaryDue(k known, recs []record) bool {
	if k.pending >= summaryEvery || k.size-k.described >= summarySlack {
		return true
	}
	for i := range recs {
		r := &recs[i]
		switch {
		case r.Kind == kindToolResult, r.Kind == kindNotice:
		case r.Kind == kindMessage && r.Message.Role == RoleTool:
		case r.Kind == kindMessage && r.Message.Role == RoleAssistant && len(r.Message.ToolCalls) > 0:
		default:
			return true
		}
	}
	return false
}

// known is what a store remembers of a conversation it appended to: the
// summary of its transcript, as long as the transcript is still the same
// file (file) of the same size. Transcripts only grow, by appends under
// the exclusive lock, so another writer's append changes the size, and a
// deleted or replaced transcript is another file.
type known struct {
	file fs.FileInfo
	size int64 // ends with a complete line
	meta Meta
	// described is the transcript size the summary file describes (-1
	// for none), pending the appends made since it was written.
	described int64
	pending   int
}

// maxKnown bounds how many conversations a store remembers. A process
// appends to a handful; forgetting costs one summary read.
const maxKnown = 256

// recall returns what is remembered of conversation id if fi, the
// transcript's current state, is still what it describes.
func (s *Store) recall(id string, fi fs.FileInfo) (known, bool) {
	s.knownMu.Lock()
	k, ok := s.known[id]
	s.knownMu.Unlock()
	if !ok || k.size != fi.Size() || !os.SameFile(k.file, fi) {
		return known{}, false
	}
	return k, true
}

func (s *Store) remember(id string, k known) {
	s.knownMu.Lock()
	defer s.knownMu.Unlock()
	if s.known == nil || len(s.known) >= maxKnown {
		if _, ok := s.known[id]; !ok {
			s.known = make(map[string]known)
		}
	}
	s.known[id] = k
}

func (s *Store) forget(id string) {
	s.knownMu.Lock()
	delete(s.known, id)
	s.knownMu.Unlock()
}

// repairTail makes the file end in a newline before an append, so the new
// record starts on a line of its own. An incomplete last line is what a
// crash mid-write leaves: it is cut off. A complete record that merely lacks
// its newline (a hand edit) is kept and terminated.
func (s *Store) repairTail(id string, f File, size int64) (int64, error) {
	end, err := completeEnd(f, size)
	if err != nil || end == size {
		return size, err
	}
	tail := make([]byte, size-end)
	if _, err := f.ReadAt(tail, end); err != nil && !errors.Is(err, io.EOF) {
		return size, err
	}
	var probe state
	if decodeRecord(tail, &probe) == nil {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			f.Truncate(size)
			return size, err
		}
		return size + 1, nil
	}
	if err := f.Truncate(end); err != nil {
		return size, err
	}
	s.warn(fmt.Errorf("conversation %s: removed an incomplete last line (%d bytes) left by an interrupted write", id, size-end))
	return end, nil
}

// metaFile is the on-disk summary: Meta plus the .jsonl size it describes,
// and the fingerprint of the bytes before that size (0 for none).
type metaFile struct {
	Version int `json:"version"`
	Meta
	Size int64  `json:"jsonl_size"`
	Tail uint32 `json:"jsonl_tail,omitempty"`
}

// fingerprintLen is how many bytes before the size it describes a
// summary's fingerprint covers: enough to tell the same transcript from an
// edited one, whose records differ in their text and to the nanosecond in
// their times.
const fingerprintLen = 64

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fingerprint hashes the last fingerprintLen bytes (or all, when fewer) of
// the transcript's first size bytes. end holds transcript bytes that end at
// size, as many as the caller has; f is read for the rest.
func fingerprint(f File, size int64, end []byte) (uint32, error) {
	n := min(int64(fingerprintLen), size)
	if int64(len(end)) >= n {
		return crc32.Checksum(end[int64(len(end))-n:], castagnoli), nil
	}
	var buf [fingerprintLen]byte
	if got, err := f.ReadAt(buf[:n], size-n); int64(got) != n {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	return crc32.Checksum(buf[:n], castagnoli), nil
}

// decodeMeta parses a summary; the caller checks that it is the summary
// it wanted.
func decodeMeta(data []byte) (metaFile, bool) {
	var m metaFile
	return m, unmarshal(data, &m) == nil
}

// writeMeta replaces the summary of meta.ID.
func (s *Store) writeMeta(meta Meta, size int64, tail uint32) error {
	data, err := json.Marshal(metaFile{Version: formatVersion, Meta: meta, Size: size, Tail: tail})
	if err != nil {
		return err
	}
	return writeFileAtomic(s.fs, s.metaPath(meta.ID), append(data, '\n'), false)
}

// saveMeta writes a summary of the transcript f's first size bytes, after
// they are safely written; end holds transcript bytes that end at size.
// Failing here loses nothing (the summary is rebuilt on the next read), so
// it warns instead of failing the append, and reports whether it wrote.
func (s *Store) saveMeta(f File, meta Meta, size int64, end []byte) bool {
	tail, err := fingerprint(f, size, end)
	if err == nil {
		err = s.writeMeta(meta, size, tail)
	}
	if err != nil {
		s.warn(fmt.Errorf("conversation %s: updating its summary (it will be rebuilt): %w", meta.ID, err))
		return false
	}
	return true
}

// maxMetaSize bounds what is read as a summary; anything larger is not one.
const maxMetaSize = 64 << 10

// readMeta returns the stored summary of id if it describes a .jsonl of
// exactly size bytes.
func (s *Store) readMeta(id string, size int64) (Meta, bool) {
	m, ok := s.loadMeta(id)
	if !ok || m.Size != size {
		return Meta{}, false
	}
	return m.Meta, true
}

// loadMeta reads the summary file of id, whatever size it describes.
func (s *Store) loadMeta(id string) (metaFile, bool) {
	f, err := s.fs.OpenFile(s.metaPath(id), os.O_RDONLY, 0)
	if err != nil {
		return metaFile{}, false
	}
	// One read normally suffices: a short read of a regular file means its
	// end. Were one ever cut short, the JSON would not parse and the
	// summary would merely be rebuilt.
	buf := make([]byte, 0, 1024)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil || len(buf) < cap(buf) {
			break
		}
		if len(buf) >= maxMetaSize {
			f.Close()
			return metaFile{}, false
		}
		buf = slices.Grow(buf, len(buf))
	}
	f.Close()
	m, ok := decodeMeta(buf)
	if !ok || m.Version != formatVersion || m.ID != id {
		return metaFile{}, false
	}
	return m, true
}

// summary returns the summary of the transcript's first size bytes, which
// the caller has locked. It comes from the summary file when that describes
// those bytes or, by its fingerprint, a prefix of them (the records after
// the prefix are folded in); otherwise it is rebuilt from the whole
// transcript. described is the size the summary file described (-1 when
// it was unusable), and end holds the transcript bytes read that end at
// size (nil when none were read). modTime dates a transcript whose first
// line is missing.
func (s *Store) summary(id string, f File, size int64, modTime time.Time) (st *state, described int64, end []byte, err error) {
	if m, ok := s.loadMeta(id); ok {
		if m.Size == size {
			return &state{meta: m.Meta}, size, nil, nil
		}
		if st, end, ok := foldTail(f, m, size); ok {
			return st, m.Size, end, nil
		}
	}
	data, err := readAll(f, size)
	if err != nil {
		return nil, 0, nil, err
	}
	st = &state{}
	s.decode(id, data, st, modTime)
	return st, -1, data, nil
}

// foldTail brings summary m up to a transcript of size bytes that grew
// past m.Size: it checks that the transcript still holds the bytes m's
// fingerprint describes, ending a line, and folds in the records after
// them. It declines (ok false) whenever anything is off, including
// unreadable records, so that a full rebuild can report them.
func foldTail(f File, m metaFile, size int64) (st *state, end []byte, ok bool) {
	if m.Tail == 0 || m.Size <= 0 || m.Size >= size {
		return nil, nil, false
	}
	from := max(m.Size-fingerprintLen, 0)
	buf := make([]byte, size-from)
	if n, _ := f.ReadAt(buf, from); n != len(buf) {
		return nil, nil, false
	}
	head, rest := buf[:m.Size-from], buf[m.Size-from:]
	if head[len(head)-1] != '\n' || crc32.Checksum(head, castagnoli) != m.Tail {
		return nil, nil, false
	}
	st = &state{meta: m.Meta}
	if d := decodeRecords(rest, st); d.lines() > 0 {
		return nil, nil, false
	}
	return st, buf, true
}

// decode folds a transcript into st, reports damage, and fills in what a
// hand-edited file may lack.
func (s *Store) decode(id string, data []byte, st *state, modTime time.Time) damage {
	d := decodeRecords(data, st)
	if err := d.describe("conversation " + id); err != nil {
		s.warn(err)
	}
	st.meta.ID = id
	if st.meta.CreatedAt.IsZero() {
		st.meta.CreatedAt = modTime.UTC()
	}
	if st.meta.UpdatedAt.IsZero() {
		st.meta.UpdatedAt = st.meta.CreatedAt
	}
	return d
}

// Load reads conversation id in full.
func (s *Store) Load(id string) (Conversation, error) {
	if !validID(id) {
		return Conversation{}, notFound(id)
	}
	if s.mem != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		st := s.mem[id]
		if st == nil {
			return Conversation{}, notFound(id)
		}
		c := Conversation{Meta: st.meta, Messages: make([]Message, len(st.messages))}
		for i, m := range st.messages {
			c.Messages[i] = cloneMessage(m)
		}
		var moved []int
		c.Messages, moved = placeToolResults(c.Messages)
		if st.results != nil {
			c.ToolResults = make(map[string]bool, len(st.results))
			for k, v := range st.results {
				c.ToolResults[k] = v
			}
		}
		c.Notices = placeNotices(slices.Clone(st.notices), moved)
		return c, nil
	}
	c, err := s.loadFile(id)
	if errors.Is(err, fs.ErrNotExist) {
		return Conversation{}, notFound(id)
	}
	if err != nil {
		return Conversation{}, fmt.Errorf("loading conversation %s: %w", id, err)
	}
	return c, nil
}

func (s *Store) loadFile(id string) (Conversation, error) {
	f, fi, err := openLockedStat(s.fs, s.Path(id), os.O_RDONLY, lockShared)
	if err != nil {
		return Conversation{}, err
	}
	data, err := readAll(f, fi.Size())
	f.Close()
	if err != nil {
		return Conversation{}, err
	}
	st := &state{keep: true}
	d := s.decode(id, data, st, fi.ModTime())
	return loaded(st, d), nil
}

// List returns every stored conversation's summary, newest first by
// UpdatedAt. A memory store returns an empty, non-nil list.
func (s *Store) List() ([]Meta, error) {
	if s.mem != nil {
		return []Meta{}, nil
	}
	entries, err := s.fs.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("listing conversations in %s: %w", s.dir, err)
	}
	metas := make([]Meta, 0, len(entries)/2)
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !validID(id) {
			continue
		}
		fi, err := s.fs.Stat(filepath.Join(s.dir, e.Name()))
		if err != nil {
			continue // deleted since the directory was read
		}
		m, ok := s.readMeta(id, fi.Size())
		if !ok {
			m, err = s.refreshMeta(id)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				s.warn(fmt.Errorf("conversation %s: left out of the list: %w", id, err))
				continue
			}
		}
		if m.OpenCalls > 0 && s.orphaned(id) {
			// Opening it answers them first (Recover): counting those
			// results now keeps the list in step with what is shown.
			m.MessageCount += m.OpenCalls
		}
		metas = append(metas, m)
	}
	slices.SortFunc(metas, func(a, b Meta) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return metas, nil
}

// refreshMeta rebuilds a missing or stale summary under the exclusive lock,
// unless a writer brought it up to date in the meantime.
func (s *Store) refreshMeta(id string) (Meta, error) {
	f, fi, err := openLockedStat(s.fs, s.Path(id), os.O_RDONLY, lockExclusive)
	if err != nil {
		return Meta{}, err
	}
	defer f.Close()
	st, described, end, err := s.summary(id, f, fi.Size(), fi.ModTime())
	if err != nil {
		return Meta{}, err
	}
	if described != fi.Size() {
		s.saveMeta(f, st.meta, fi.Size(), end)
	}
	return st.meta, nil
}

// Delete removes conversation id.
func (s *Store) Delete(id string) error {
	if !validID(id) {
		return notFound(id)
	}
	if s.mem != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.mem[id] == nil {
			return notFound(id)
		}
		delete(s.mem, id)
		return nil
	}
	// A conversation open in another process stays: its next append
	// would fail, and the person there would lose the turn in progress.
	hold, err := s.Hold(id)
	if err != nil {
		if errors.Is(err, ErrHeld) {
			return fmt.Errorf("deleting conversation %s: %w; close it there first", id, err)
		}
		return err
	}
	defer hold.Release()
	// The kept transcript closes before the lock is taken: an append in
	// progress holds its appender while it waits for the lock, so
	// retiring it under the lock could wait for that append forever.
	s.dropAppender(id)
	f, err := openLocked(s.fs, s.Path(id), os.O_RDONLY, lockExclusive)
	if errors.Is(err, fs.ErrNotExist) {
		return notFound(id)
	}
	if err != nil {
		return fmt.Errorf("deleting conversation %s: %w", id, err)
	}
	defer f.Close()
	s.forget(id)
	// The transcript goes first: a summary left behind by a crash is
	// ignored, while a transcript without one would be rebuilt and return.
	if err := s.fs.Remove(s.Path(id)); err != nil {
		return fmt.Errorf("deleting conversation %s: %w", id, err)
	}
	if err := s.fs.Remove(s.metaPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.warn(fmt.Errorf("conversation %s: deleted, but its summary file remains: %w", id, err))
	}
	return nil
}

// cloneMessage copies m's slices so that callers of a memory store cannot
// change stored messages through them.
func cloneMessage(m Message) Message {
	m.ToolCalls = slices.Clone(m.ToolCalls)
	m.ProviderData = maps.Clone(m.ProviderData)
	return m
}
