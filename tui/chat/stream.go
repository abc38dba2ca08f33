package chat

import (
	"strings"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/tui/frame"
)

// mdStream renders a growing Markdown message without re-rendering what is
// already final: text up to the last block boundary (a blank line outside
// a code fence) is rendered once, block by block, and only the unfinished
// tail is rendered again as text arrives. The cost of a frame therefore
// depends on the size of the last block, not of the message.
type mdStream struct {
	width, epoch int
	doneEnd      int      // bytes of the source rendered as final blocks
	done         []string // their lines
	tailSrc      string   // the tail source rendered last time
	tail         []string // its lines
}

// forceSplit bounds a tail without block boundaries (one enormous
// paragraph): past it, the tail is cut at a space and the head becomes a
// final block, so streaming stays cheap even for pathological text.
const forceSplit = 4096

func (s *mdStream) reset(width, epoch int) {
	*s = mdStream{width: width, epoch: epoch}
}

// update renders src (the whole message so far) and reports the final
// lines and the tail lines.
func (s *mdStream) update(src []byte, md *markdown, width, epoch int) (done, tail []string) {
	if s.width != width || s.epoch != epoch || s.doneEnd > len(src) {
		s.reset(width, epoch)
	}
	for {
		end, joined := nextBlock(src, s.doneEnd)
		if end < 0 {
			break
		}
		chunk := string(src[s.doneEnd:end])
		if strings.TrimSpace(chunk) != "" {
			if len(s.done) > 0 && !joined {
				s.done = append(s.done, frame.Pad("", width))
			}
			for _, l := range md.Render(chunk, width) {
				s.done = append(s.done, frame.Pad(l, width))
			}
		}
		s.doneEnd = end
	}
	tailSrc := string(src[s.doneEnd:])
	if tailSrc != s.tailSrc || s.tail == nil {
		s.tailSrc = tailSrc
		s.tail = nil
		if strings.TrimSpace(tailSrc) != "" {
			if len(s.done) > 0 {
				s.tail = append(s.tail, frame.Pad("", width))
			}
			for _, l := range md.Render(tailSrc, width) {
				s.tail = append(s.tail, frame.Pad(l, width))
			}
		}
	}
	return s.done, s.tail
}

// nextBlock finds the end of the next complete block after from: the byte
// after a blank line that is outside a code fence. joined reports a forced
// split inside a paragraph (no blank line belongs between the halves).
// It returns -1 when the rest is still one unfinished block.
func nextBlock(src []byte, from int) (end int, joined bool) {
	inFence, seen := false, false
	lineStart := from
	for i := from; i < len(src); i++ {
		if src[i] != '\n' {
			continue
		}
		line := strings.TrimSpace(string(src[lineStart:i]))
		switch {
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			inFence = !inFence
			seen = true
		case line == "" && !inFence && seen:
			return i + 1, false
		case line != "":
			seen = true
		}
		lineStart = i + 1
	}
	if !inFence && len(src)-from > forceSplit {
		cut := from + forceSplit
		for cut > from && src[cut] != ' ' {
			cut--
		}
		if cut > from {
			return cut + 1, true
		}
	}
	return -1, false
}

// plainStream wraps growing plain text (reasoning) the same way: complete
// lines are wrapped and decorated once, only the last, unfinished line
// again. The text is the model's and is made safe (termtext.Text) before
// decorate styles a wrapped line; the result is padded to width.
type plainStream struct {
	width, epoch int
	doneEnd      int
	done         []string
}

func (s *plainStream) update(src []byte, wrapWidth, width, epoch int, decorate func(string) string) (done, tail []string) {
	if s.width != width || s.epoch != epoch || s.doneEnd > len(src) {
		*s = plainStream{width: width, epoch: epoch}
	}
	if i := lastNewline(src); i >= s.doneEnd {
		for _, l := range Wrap(termtext.Text(string(src[s.doneEnd:i])), wrapWidth) {
			s.done = append(s.done, frame.Pad(decorate(l), width))
		}
		s.doneEnd = i + 1
	}
	if s.doneEnd < len(src) {
		for _, l := range Wrap(termtext.Text(string(src[s.doneEnd:])), wrapWidth) {
			tail = append(tail, frame.Pad(decorate(l), width))
		}
	}
	return s.done, tail
}

func lastNewline(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}
