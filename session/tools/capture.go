package tools

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// capture keeps the head and the tail of a stream within a fixed budget
// and counts what it dropped, so a flood of output costs bounded memory
// and the model still sees how the command started and how it ended.
type capture struct {
	mu       sync.Mutex
	headMax  int
	tailMax  int
	head     []byte
	tail     []byte // ring buffer once full
	tailPos  int
	total    int64
	tailFull bool
}

func newCapture(limit int) *capture {
	return &capture{headMax: limit / 2, tailMax: limit - limit/2}
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	if room := c.headMax - len(c.head); room > 0 {
		take := min(room, len(p))
		c.head = append(c.head, p[:take]...)
		p = p[take:]
	}
	for len(p) > 0 {
		if !c.tailFull {
			room := c.tailMax - len(c.tail)
			take := min(room, len(p))
			c.tail = append(c.tail, p[:take]...)
			p = p[take:]
			if len(c.tail) == c.tailMax {
				c.tailFull = true
			}
			continue
		}
		// Only the last tailMax bytes of p can survive.
		if len(p) > c.tailMax {
			p = p[len(p)-c.tailMax:]
		}
		k := copy(c.tail[c.tailPos:], p)
		p = p[k:]
		c.tailPos = (c.tailPos + k) % c.tailMax
	}
	return n, nil
}

// String returns the kept text with a marker where bytes were dropped,
// trimmed to whole UTF-8 characters at the cut.
func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := c.tail
	if c.tailFull {
		tail = append(append([]byte(nil), c.tail[c.tailPos:]...), c.tail[:c.tailPos]...)
	}
	kept := int64(len(c.head) + len(tail))
	if kept == c.total {
		return string(c.head) + string(tail)
	}
	head := trimCutRune(c.head)
	start := 0
	for start < len(tail) && start < utf8.UTFMax && !utf8.RuneStart(tail[start]) {
		start++
	}
	omitted := c.total - int64(len(head)) - int64(len(tail)-start)
	return fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", head, omitted, tail[start:])
}

// trimCutRune drops a partial UTF-8 character from the end of b.
func trimCutRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size > 1 {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}
