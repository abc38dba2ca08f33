package skills

import (
	"sync"
)

// Live lists skills as the folders hold them now. Discovery reads a few
// small files and runs only when a person or the panel asks for the list,
// so it runs afresh every time: a skill added or removed while infer runs
// shows at once, with no file watcher to keep alive.
type Live struct {
	opts Options
	warn func(error)

	mu     sync.Mutex
	warned map[string]bool
}

// NewLive returns a Live over opts. warn receives each distinct warning
// once (a broken SKILL.md would otherwise be reported on every listing);
// it may be nil.
func NewLive(opts Options, warn func(error)) *Live {
	return &Live{opts: opts, warn: warn, warned: map[string]bool{}}
}

// List discovers the skills now.
func (l *Live) List() []Skill {
	found, warnings := Discover(l.opts)
	if l.warn != nil && len(warnings) > 0 {
		l.mu.Lock()
		var fresh []error
		for _, w := range warnings {
			if !l.warned[w.Error()] {
				l.warned[w.Error()] = true
				fresh = append(fresh, w)
			}
		}
		l.mu.Unlock()
		for _, w := range fresh {
			l.warn(w)
		}
	}
	return found
}
