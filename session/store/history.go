package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// History bounds. List serves the newest entries, at most historyCap of
// them and historyMaxBytes in all (the oldest go first); an entry longer
// than historyMaxEntry is not kept at all, since recalling a pasted
// megabyte with the arrow key helps nobody and every process holding the
// history would keep it in memory. The file is compacted back to what List
// serves once it holds more than historyCompactAt lines or
// historyCompactBytes bytes, so it stays small without rewriting on every
// entry; at most historyReadMax bytes of its end are ever read, so a file
// grown by hand or by an older infer costs a bounded read.
const (
	historyCap          = 1000
	historyCompactAt    = 2000
	historyMaxEntry     = 64 << 10
	historyMaxBytes     = 1 << 20
	historyCompactBytes = 2 * historyMaxBytes
	historyReadMax      = historyCompactBytes + 2*historyMaxEntry
)

// trimHistory drops the entries List would no longer serve, once there are
// enough of them to be worth a copy, so that what a long-running process
// keeps stays bounded too.
func trimHistory(entries []string) []string {
	keep := historyWindow(entries)
	dropped := entries[:len(entries)-len(keep)]
	size := 0
	for _, e := range dropped {
		size += len(e)
	}
	if len(dropped) < historyCap && size < historyMaxBytes {
		return entries
	}
	return append([]string{}, keep...)
}

// historyWindow returns the newest entries List serves: at most historyCap
// of them, of at most historyMaxBytes together.
func historyWindow(entries []string) []string {
	total, i := 0, len(entries)
	for i > 0 && len(entries)-i < historyCap {
		n := len(entries[i-1])
		if total+n > historyMaxBytes {
			break
		}
		total += n
		i--
	}
	return entries[i:]
}

// History is the shell-style input history shared by the TUI's arrow-up and
// the panel's list_history. The file holds one JSON string per line, so
// multi-line entries round-trip. Several processes may share it: appends
// take an exclusive lock, and each process rereads what the others added
// before deciding whether an entry repeats the newest one.
type History struct {
	path string // "" for a memory history
	fs   FS

	mu      sync.Mutex
	entries []string // oldest first, as of the last read
	lines   int      // lines in the file as of the last read
	// pinned is an open descriptor of the file last read, and seen its
	// identity and size at that read. Holding the descriptor keeps the
	// inode alive, so its number cannot be reused by a file that another
	// process's compaction creates, and "same file" comparisons stay sound.
	pinned    File
	seen      fs.FileInfo
	seenLen   int64
	seenWhole bool // the last read ended on a line boundary
}

// OpenHistory opens (creating if needed) the history file at path. Close
// releases the descriptor it keeps.
func OpenHistory(path string) (*History, error) {
	return openHistory(path, OS)
}

func openHistory(path string, fsys FS) (*History, error) {
	if path == "" {
		return nil, errors.New("opening input history: no file given")
	}
	h := &History{path: path, fs: fsys}
	if err := fsys.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("opening input history %s: %w", path, err)
	}
	f, err := openLocked(fsys, path, os.O_RDWR|os.O_CREATE, lockShared)
	if err != nil {
		return nil, fmt.Errorf("opening input history %s: %w", path, err)
	}
	defer f.Close()
	if _, err := h.reload(f); err != nil {
		h.Close()
		return nil, fmt.Errorf("reading input history %s: %w", path, err)
	}
	return h, nil
}

// MemoryHistory returns a history that is not saved.
func MemoryHistory() *History {
	return &History{}
}

// Close releases the history's file. Later calls on h still work; they
// just reread the file.
func (h *History) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.unpin()
}

// List returns the most recent entries (at most 1000, of at most 1 MiB
// together), oldest first, never nil. When the file cannot be read it
// returns what was read last.
func (h *History) List() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.path != "" && h.changed() {
		if f, err := openLocked(h.fs, h.path, os.O_RDONLY, lockShared); err == nil {
			h.reload(f)
			f.Close()
		}
	}
	return append([]string{}, historyWindow(h.entries)...)
}

// Add records an entry: surrounding whitespace is trimmed, blank entries
// and entries longer than 64 KiB are ignored, and an entry equal to the
// newest one is not repeated. Inner newlines and indentation are kept.
func (h *History) Add(text string) error {
	text = strings.TrimSpace(text)
	if text == "" || len(text) > historyMaxEntry {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.path == "" {
		if n := len(h.entries); n > 0 && h.entries[n-1] == text {
			return nil
		}
		h.entries = trimHistory(append(h.entries, text))
		return nil
	}
	if err := h.addFile(text); err != nil {
		return fmt.Errorf("saving input history to %s: %w", h.path, err)
	}
	return nil
}

func (h *History) addFile(text string) error {
	f, err := openLocked(h.fs, h.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, lockExclusive)
	if err != nil {
		return err
	}
	defer f.Close()
	size, err := h.reload(f)
	if err != nil {
		return err
	}
	if n := len(h.entries); n > 0 && h.entries[n-1] == text {
		return nil
	}
	if size, err = h.repairTail(f, size); err != nil {
		h.forget()
		return err
	}
	line, err := encodeHistoryLine(text)
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Truncate(size)
		h.forget()
		return err
	}
	h.entries = append(h.entries, text)
	h.lines++
	h.seenLen, h.seenWhole = size+int64(len(line)), true
	if h.lines > historyCompactAt || h.seenLen > historyCompactBytes {
		return h.compact()
	}
	return nil
}

// repairTail makes the file end in a newline so the next entry starts on a
// line of its own: an incomplete line left by a crash is cut off, while a
// valid entry that merely lacks its newline (a hand edit) is terminated.
func (h *History) repairTail(f File, size int64) (int64, error) {
	end, err := completeEnd(f, size)
	if err != nil || end == size {
		return size, err
	}
	tail := make([]byte, size-end)
	if _, err := f.ReadAt(tail, end); err != nil && !errors.Is(err, io.EOF) {
		return size, err
	}
	var s string
	if json.Unmarshal(tail, &s) == nil {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			f.Truncate(size)
			return size, err
		}
		return size + 1, nil
	}
	return end, f.Truncate(end)
}

// compact rewrites the file with the newest entries only. The caller holds
// the exclusive lock on the file being replaced; processes waiting on it
// notice the replacement and lock the new file instead.
func (h *History) compact() error {
	keep := historyWindow(h.entries)
	var buf bytes.Buffer
	for _, e := range keep {
		line, err := encodeHistoryLine(e)
		if err != nil {
			return err
		}
		buf.Write(line)
	}
	h.forget()
	if err := writeFileAtomic(h.fs, h.path, buf.Bytes(), true); err != nil {
		return fmt.Errorf("compacting: %w", err)
	}
	h.entries = append([]string{}, keep...)
	h.lines = len(keep)
	// Another process may append to the new file the moment it appears;
	// pin it only if it is exactly what was written, else reread it later.
	if p, err := h.fs.OpenFile(h.path, os.O_RDONLY, 0); err == nil {
		if fi, err := p.Stat(); err == nil && fi.Size() == int64(buf.Len()) {
			h.pin(p, fi, fi.Size(), true)
		} else {
			p.Close()
		}
	}
	return nil
}

// changed reports whether the file may differ from what was read last.
func (h *History) changed() bool {
	fi, err := h.fs.Stat(h.path)
	return err != nil || h.seen == nil || !os.SameFile(fi, h.seen) || fi.Size() != h.seenLen
}

// reload brings the entries up to date with the locked file f and returns
// its size. When the file only grew since the last read, and that read
// ended on a whole line, only the new lines are read: other processes
// append far more often than they compact.
func (h *History) reload(f File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	same := h.seen != nil && os.SameFile(fi, h.seen)
	if same && size == h.seenLen {
		return size, nil
	}
	if same && size > h.seenLen && h.seenWhole && size-h.seenLen <= historyReadMax {
		add := make([]byte, size-h.seenLen)
		n, err := f.ReadAt(add, h.seenLen)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		entries, lines := decodeHistory(add[:n])
		h.entries = trimHistory(append(h.entries, entries...))
		h.lines += lines
		h.seenLen += int64(n)
		h.seenWhole = n == 0 || add[n-1] == '\n'
		return h.seenLen, nil
	}
	data, end, err := readTail(f, size)
	if err != nil {
		return 0, err
	}
	h.entries, h.lines = decodeHistory(data)
	h.entries = trimHistory(h.entries)
	h.forget()
	// f is locked, so the path still names it; pin it with a descriptor of
	// our own, since the caller closes f.
	if p, err := h.fs.OpenFile(h.path, os.O_RDONLY, 0); err == nil {
		if pfi, err := p.Stat(); err == nil && os.SameFile(pfi, fi) {
			whole := end == 0 || len(data) > 0 && data[len(data)-1] == '\n'
			h.pin(p, fi, end, whole)
		} else {
			p.Close()
		}
	}
	return end, nil
}

// readTail reads the last historyReadMax bytes of the file's first size
// bytes, from the first line that starts in them: only the newest entries
// are ever served, and an oversized file must not cost an oversized read.
// end is where what was read ends.
func readTail(f File, size int64) (data []byte, end int64, err error) {
	if size <= historyReadMax {
		data, err = readAll(f, size)
		return data, int64(len(data)), err
	}
	// Reading from the byte before the window tells whether the window
	// starts a line.
	from := size - historyReadMax - 1
	buf := make([]byte, historyReadMax+1)
	n, err := f.ReadAt(buf, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	buf = buf[:n]
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		return nil, from + int64(n), nil
	}
	return buf[i+1:], from + int64(n), nil
}

func (h *History) pin(p File, fi fs.FileInfo, size int64, whole bool) {
	h.pinned, h.seen, h.seenLen, h.seenWhole = p, fi, size, whole
}

// forget drops what is known about the file, so the next access rereads
// it in full: after a failed write, or before the file is replaced.
func (h *History) forget() {
	h.unpin()
}

func (h *History) unpin() error {
	var err error
	if h.pinned != nil {
		err = h.pinned.Close()
	}
	h.pinned, h.seen, h.seenLen, h.seenWhole = nil, nil, 0, false
	return err
}

// decodeHistory parses the file, skipping lines that are not JSON strings
// (an incomplete last line, a stray edit), and counts all lines.
func decodeHistory(data []byte) (entries []string, lines int) {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		lines++
		// A line too long to hold a kept entry is one an older infer (or
		// an edit) wrote; it is skipped before it is decoded.
		if len(line) > 6*historyMaxEntry+2 { // "\u001b" is six bytes
			continue
		}
		var s string
		if json.Unmarshal(line, &s) != nil {
			continue
		}
		if s = strings.TrimSpace(s); s != "" && len(s) <= historyMaxEntry {
			entries = append(entries, s)
		}
	}
	return entries, lines
}

func encodeHistoryLine(text string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(text); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
