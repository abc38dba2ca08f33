package sim

import "net/http"

// Direction says which way a frame travelled, in the words of the
// recordings (sim/recording).
type Direction string

// The two directions.
const (
	ExtToSrv Direction = "ext->srv"
	SrvToExt Direction = "srv->ext"
)

// RedactedToken stands in for the token wherever a frame leaves the client
// for a Tap.
const RedactedToken = "[redacted]"

// Tap sees a client's connection at the wire level: the upgrade request's
// headers, every frame as sent or received (keepalives excepted, malformed
// ones included), and connection events. A Tap is called from several
// goroutines, so it must be safe for concurrent use; frames of one
// direction arrive in wire order. The hello it sees carries RedactedToken,
// never the token.
type Tap interface {
	// Handshake is called before each dial with the headers sent.
	Handshake(header http.Header)
	// Frame is one text message.
	Frame(dir Direction, data []byte)
	// Event is "connected", "disconnected" or "rejected".
	Event(name string)
}

// Taps fans a client's wire events out to several taps.
func Taps(taps ...Tap) Tap {
	var live multiTap
	for _, t := range taps {
		if t != nil {
			live = append(live, t)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return live
}

type multiTap []Tap

func (m multiTap) Handshake(h http.Header) {
	for _, t := range m {
		t.Handshake(h)
	}
}

func (m multiTap) Frame(dir Direction, data []byte) {
	for _, t := range m {
		t.Frame(dir, data)
	}
}

func (m multiTap) Event(name string) {
	for _, t := range m {
		t.Event(name)
	}
}

// TapFunc adapts a function that wants only frames to a Tap.
type TapFunc func(dir Direction, data []byte)

// Handshake implements Tap; it ignores the headers.
func (TapFunc) Handshake(http.Header) {}

// Frame implements Tap.
func (f TapFunc) Frame(dir Direction, data []byte) { f(dir, data) }

// Event implements Tap; it ignores events.
func (TapFunc) Event(string) {}
