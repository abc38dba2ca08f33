package recording

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/sim"
)

// ReplayOptions say where and how to replay.
type ReplayOptions struct {
	// URL and Token reach infer's bridge.
	URL, Token string
	// ExtOnly only checks that infer accepts every recorded extension frame
	// without closing the connection; infer's answers are not compared.
	ExtOnly bool
	// Settle is how long infer may stay quiet before the replay sends the
	// next recorded frame anyway, and how long it listens for frames beyond
	// the recorded ones at the end (default 500ms).
	Settle time.Duration
	// Timeout bounds every wait, including the wait for the last recorded
	// frame (default 15s).
	Timeout time.Duration
	// Logger receives the client's diagnostics.
	Logger *slog.Logger
}

// Report is what a replay found.
type Report struct {
	URL     string
	ExtOnly bool
	// Sent counts the extension frames sent, by type.
	Sent map[string]int
	// Expected and Received are infer's frames: recorded and seen.
	Expected, Received int
	// Differences are infer's answers that differ from the recording (not
	// filled in ExtOnly mode).
	Differences []Difference
	// Unanswered are browser commands infer sent that the recording has no
	// result for.
	Unanswered []string
	// Dropped says the connection ended during the replay, and after which
	// recorded line; empty when it stayed open.
	Dropped string
	// Probe says how the connection was checked at the end (ExtOnly).
	Probe string
}

// Difference is one way infer's frames differ from the recorded ones.
type Difference struct {
	// Kind is "missing" (recorded, not sent by infer), "extra" (sent by
	// infer, not recorded) or "changed" (a recorded frame infer sent
	// differently).
	Kind string
	// Line is the recorded frame's line (missing, changed).
	Line int
	// Want and Got are the normalized frames.
	Want, Got string
	// Why is the first difference of a changed frame.
	Why string
}

// Equivalent reports whether the replay found nothing wrong.
func (r *Report) Equivalent() bool {
	return len(r.Differences) == 0 && len(r.Unanswered) == 0 && r.Dropped == ""
}

// String is the readable report.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "replayed the extension's side against %s\n", r.URL)
	types := make([]string, 0, len(r.Sent))
	total := 0
	for t, n := range r.Sent {
		types = append(types, fmt.Sprintf("%d %s", n, t))
		total += n
	}
	sort.Strings(types)
	fmt.Fprintf(&b, "sent %d extension frames (%s)\n", total, strings.Join(types, ", "))
	if r.Dropped != "" {
		fmt.Fprintf(&b, "FAIL: infer closed the connection %s\n", r.Dropped)
	}
	for _, u := range r.Unanswered {
		fmt.Fprintf(&b, "infer sent a browser command the recording has no result for: %s\n", u)
	}
	if r.ExtOnly {
		if r.Dropped == "" {
			fmt.Fprintf(&b, "infer accepted every recorded extension frame; the connection stayed open (%s)\n", r.Probe)
		}
		return strings.TrimRight(b.String(), "\n")
	}
	fmt.Fprintf(&b, "infer sent %d frames; the recording has %d\n", r.Received, r.Expected)
	if len(r.Differences) == 0 {
		b.WriteString("infer's answers match the recording (ids, timestamps and uuids ignored)")
		return b.String()
	}
	fmt.Fprintf(&b, "%d differences from the recorded frames (ids, timestamps and uuids ignored):\n", len(r.Differences))
	for _, d := range r.Differences {
		switch d.Kind {
		case "missing":
			fmt.Fprintf(&b, "  - missing (line %d): %s\n", d.Line, clip(d.Want, 300))
		case "extra":
			fmt.Fprintf(&b, "  + extra: %s\n", clip(d.Got, 300))
		case "changed":
			fmt.Fprintf(&b, "  ~ changed (line %d): %s\n      want %s\n       got %s\n", d.Line, d.Why, clip(d.Want, 300), clip(d.Got, 300))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Replay plays the extension's side of a recording against infer: it
// connects as the recorded extension (its Origin and version), sends every
// recorded extension frame in order except the hello (the client's own)
// and the browser results, and answers infer's browser commands with the
// recorded results matched by action and arguments, in order. Before each
// frame it waits until infer has sent as many frames as the recording had
// by then, or has been quiet for Settle. It then compares infer's frames
// with the recorded ones, ignoring ids, timestamps and uuids.
//
// In ExtOnly mode the recorded browser results are sent too, unasked, and
// the replay only checks that the connection survives every frame.
func Replay(ctx context.Context, entries []Entry, opts ReplayOptions) (*Report, error) {
	if opts.Settle <= 0 {
		opts.Settle = 500 * time.Millisecond
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 15 * time.Second
	}
	origin, version := "", ""
	answers := newAnswerBook()
	var expected []Entry
	for _, e := range entries {
		switch {
		case e.Handshake != nil && origin == "":
			origin = e.Handshake["Origin"]
		case e.Type() == wire.BrowserHello{}.FrameType() && version == "":
			var h wire.BrowserHello
			json.Unmarshal(e.Frame, &h)
			version = h.ExtensionVersion
		case e.Dir == sim.SrvToExt && len(e.Frame) > 0:
			expected = append(expected, e)
		}
	}
	answers.learn(entries)
	if version == "" {
		return nil, errors.New("the recording has no browser_hello, so it is not an extension session")
	}

	rep := &Report{URL: opts.URL, ExtOnly: opts.ExtOnly, Sent: map[string]int{}, Expected: len(expected)}
	got := &inbox{wake: make(chan struct{}, 1)}
	client := sim.NewClient(sim.ClientOptions{
		URL: opts.URL, Token: opts.Token, ExtensionVersion: version, Origin: origin,
		Browser: answers, Tap: got, Logger: opts.Logger,
		MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second,
	})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- client.Run(runCtx) }()
	defer func() {
		stop()
		<-done
	}()
	wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	err := client.WaitConnected(wctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("could not connect to infer at %s: %s", opts.URL, sim.ConnectAdvice(client.LastError()))
	}
	rep.Sent[wire.BrowserHello{}.FrameType()]++

	// A disconnection is replayed only when the recording goes on with a
	// new connection; the one that ends a recording is just its end.
	lastConnect := -1
	for i, e := range entries {
		if e.Event == "connected" {
			lastConnect = i
		}
	}
	recordedSoFar := 0
	connected := 0
	for i, e := range entries {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch {
		case e.Event == "connected":
			connected++
			if connected > 1 { // a reconnection in the recording
				client.Reconnect()
				wctx, cancel := context.WithTimeout(ctx, opts.Timeout)
				client.WaitConnected(wctx)
				cancel()
				rep.Sent[wire.BrowserHello{}.FrameType()]++
			}
			continue
		case e.Event == "disconnected":
			if i > lastConnect {
				continue
			}
			if !opts.ExtOnly {
				got.wait(ctx, recordedSoFar, opts.Settle, opts.Timeout)
			}
			client.Disconnect()
			continue
		case e.Dir == sim.SrvToExt && len(e.Frame) > 0:
			recordedSoFar++
			continue
		case e.Dir != sim.ExtToSrv || e.Handshake != nil:
			continue
		}
		typ := e.Type()
		if typ == (wire.BrowserHello{}).FrameType() || (typ == (wire.BrowserResult{}).FrameType() && !opts.ExtOnly) {
			continue
		}
		if !opts.ExtOnly {
			got.wait(ctx, recordedSoFar, opts.Settle, opts.Timeout)
		}
		if !client.Connected() && rep.Dropped == "" {
			rep.Dropped = fmt.Sprintf("before the frame on line %d was sent (%v)", e.Line, client.LastError())
			break
		}
		msg := []byte(e.Raw)
		if len(e.Frame) > 0 {
			msg = e.Frame
		} else {
			typ = "malformed"
		}
		if err := client.SendRaw(ctx, msg); err != nil {
			rep.Dropped = fmt.Sprintf("while the frame on line %d was sent: %v", e.Line, err)
			break
		}
		rep.Sent[typ]++
	}
	if opts.ExtOnly {
		got.quiet(ctx, opts.Settle, opts.Timeout)
		if rep.Dropped == "" {
			rep.Dropped, rep.Probe = probe(ctx, client, opts.Timeout)
		}
	} else {
		// Every recorded frame is waited for (a stall under load is not a
		// difference), then a little longer for frames beyond them.
		got.wait(ctx, len(expected), opts.Timeout, opts.Timeout)
		got.quiet(ctx, opts.Settle, opts.Settle)
		if rep.Dropped == "" && client.Connects() > max(connected, 1) {
			rep.Dropped = "and the client had to reconnect during the replay"
		}
	}
	received := got.frames()
	rep.Received = len(received)
	rep.Unanswered = answers.missed()
	if !opts.ExtOnly {
		rep.Differences = compare(expected, received)
	}
	return rep, nil
}

// probe checks that the connection is still the first one and answers.
func probe(ctx context.Context, c *sim.Client, timeout time.Duration) (dropped, how string) {
	if c.Connects() != 1 || !c.Connected() {
		return fmt.Sprintf("during the replay (%v)", c.LastError()), ""
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	list, err := c.ListConversations(pctx)
	if err != nil {
		return fmt.Sprintf("or stopped answering: list_conversations at the end got %v", err), ""
	}
	return "", fmt.Sprintf("list_conversations at the end was answered with %d conversations", len(list.Conversations))
}

// inbox collects infer's frames as the client's Tap.
type inbox struct {
	mu   sync.Mutex
	got  [][]byte
	last time.Time
	wake chan struct{}
}

func (in *inbox) Handshake(http.Header) {}
func (in *inbox) Event(string)          {}

func (in *inbox) Frame(dir sim.Direction, data []byte) {
	if dir != sim.SrvToExt {
		return
	}
	in.mu.Lock()
	in.got = append(in.got, append([]byte(nil), data...))
	in.last = time.Now()
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

func (in *inbox) frames() [][]byte {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([][]byte(nil), in.got...)
}

func (in *inbox) count() (int, time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.got), in.last
}

// wait returns once n frames have arrived, or infer has been quiet for
// settle, or timeout has passed.
func (in *inbox) wait(ctx context.Context, n int, settle, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	start := time.Now()
	for {
		have, last := in.count()
		if have >= n {
			return
		}
		if last.Before(start) {
			last = start
		}
		quietUntil := last.Add(settle)
		if time.Now().After(quietUntil) || time.Now().After(deadline) {
			return
		}
		t := time.NewTimer(min(time.Until(quietUntil), time.Until(deadline)))
		select {
		case <-in.wake:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		t.Stop()
	}
}

// quiet returns once infer has sent nothing for settle.
func (in *inbox) quiet(ctx context.Context, settle, timeout time.Duration) {
	in.wait(ctx, int(^uint(0)>>1), settle, timeout)
}

// answerBook answers browser commands with the recorded results, matched
// by action and arguments in recorded order.
type answerBook struct {
	mu      sync.Mutex
	results map[string][]wire.BrowserResult
	misses  []string
}

func newAnswerBook() *answerBook { return &answerBook{results: map[string][]wire.BrowserResult{}} }

func commandKey(c wire.BrowserCommand) string {
	return strings.Join([]string{string(c.Action), c.URL, c.Selector, c.Text, strconv.FormatBool(c.PressEnter)}, "\x00")
}

// learn pairs each recorded command with its recorded result.
func (a *answerBook) learn(entries []Entry) {
	cmds := map[string]wire.BrowserCommand{}
	for _, e := range entries {
		switch e.Type() {
		case wire.BrowserCommand{}.FrameType():
			if f, err := wire.Decode(e.Frame); err == nil {
				c := f.(wire.BrowserCommand)
				cmds[c.ID] = c
			}
		case wire.BrowserResult{}.FrameType():
			f, err := wire.Decode(e.Frame)
			if err != nil {
				continue
			}
			r := f.(wire.BrowserResult)
			if c, ok := cmds[r.ID]; ok {
				k := commandKey(c)
				a.results[k] = append(a.results[k], r)
			}
		}
	}
}

// Do implements sim.Browser.
func (a *answerBook) Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := commandKey(cmd)
	if rs := a.results[k]; len(rs) > 0 {
		a.results[k] = rs[1:]
		return rs[0]
	}
	desc := string(cmd.Action) + " " + strings.TrimSpace(cmd.URL+" "+cmd.Selector+" "+cmd.Text)
	a.misses = append(a.misses, strings.TrimSpace(desc))
	return wire.BrowserResult{Error: "infer-sim replay: the recording has no result for " + desc}
}

func (a *answerBook) missed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.misses...)
}

// Normalization: what differs between two runs of the same session.
var (
	// maskedKeys hold ids and times: their values are replaced.
	maskedKeys = map[string]string{
		"id": "<id>", "request_id": "<id>", "messageId": "<id>", "threadId": "<id>", "runId": "<id>",
		"toolCallId": "<id>", "parentMessageId": "<id>", "tool_call_id": "<id>", "updated_at": "<time>",
	}
	// droppedKeys are left out altogether.
	droppedKeys = map[string]bool{"timestamp": true}
	// timeout_ms is derived from the time left, so it is compared to the
	// nearest second.

	uuidPattern = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	timePattern = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})`)
)

// Normalize renders a frame with ids, times and uuids masked, as compact
// JSON with sorted keys.
func Normalize(frame []byte) string {
	var v any
	if err := json.Unmarshal(frame, &v); err != nil {
		return string(frame)
	}
	return compactJSON(mask(v))
}

// compactJSON is v as one line of JSON with sorted keys, without escaping
// <, > and &.
func compactJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func mask(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			switch {
			case droppedKeys[k]:
			case k == "timeout_ms":
				if ms, ok := x.(float64); ok {
					out[k] = math.Round(ms/1000) * 1000
				} else {
					out[k] = x
				}
			case maskedKeys[k] != "":
				if m, ok := x.(map[string]any); ok { // a map keyed by ids
					out[k] = mask(m)
				} else {
					out[k] = maskedKeys[k]
				}
			default:
				out[k] = mask(x)
			}
		}
		if tr, ok := out["tool_results"].(map[string]any); ok { // keyed by call ids
			vals := make([]any, 0, len(tr))
			for _, x := range tr {
				vals = append(vals, x)
			}
			out["tool_results"] = vals
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = mask(x)
		}
		return out
	case string:
		return timePattern.ReplaceAllString(uuidPattern.ReplaceAllString(v, "<uuid>"), "<time>")
	}
	return v
}

// compare lists how the received frames differ from the recorded ones.
// infer's chat events and its other frames (commands, answers, approvals)
// come from different goroutines, so their interleaving varies from run
// to run; each of the two streams is compared on its own, in order.
func compare(expected []Entry, received [][]byte) []Difference {
	var wantChat, wantOther []Entry
	for _, e := range expected {
		if e.Type() == (wire.ChatEvent{}).FrameType() {
			wantChat = append(wantChat, e)
		} else {
			wantOther = append(wantOther, e)
		}
	}
	var gotChat, gotOther [][]byte
	for _, r := range received {
		if t, _ := wire.PeekType(r); t == (wire.ChatEvent{}).FrameType() {
			gotChat = append(gotChat, r)
		} else {
			gotOther = append(gotOther, r)
		}
	}
	diffs := align(wantOther, gotOther)
	diffs = append(diffs, align(mergeEntryDeltas(wantChat), mergeDeltas(gotChat))...)
	return diffs
}

// deltaKey identifies a chat event whose delta may be merged with the
// next one's: infer coalesces the deltas of one message when the panel
// reads slower than the model streams, so how the text is cut into frames
// varies from run to run while the text itself does not.
func deltaKey(frame []byte) (key, delta string, ev map[string]any, ok bool) {
	var f struct {
		Event map[string]any `json:"event"`
	}
	if json.Unmarshal(frame, &f) != nil || f.Event == nil {
		return "", "", nil, false
	}
	typ, _ := f.Event["type"].(string)
	d, hasDelta := f.Event["delta"].(string)
	switch typ {
	case "TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT":
		id, _ := f.Event["messageId"].(string)
		return typ + "/" + id, d, f.Event, hasDelta
	case "TOOL_CALL_ARGS":
		id, _ := f.Event["toolCallId"].(string)
		return typ + "/" + id, d, f.Event, hasDelta
	}
	return "", "", nil, false
}

// mergeDeltas joins consecutive deltas of the same message.
func mergeDeltas(frames [][]byte) [][]byte {
	entries := make([]Entry, len(frames))
	for i, f := range frames {
		entries[i].Frame = f
	}
	merged := mergeEntryDeltas(entries)
	out := make([][]byte, len(merged))
	for i, e := range merged {
		out[i] = e.Frame
	}
	return out
}

// mergeEntryDeltas joins consecutive deltas of the same message in
// recorded entries, keeping the line of the first entry of each merged run
// for the report.
func mergeEntryDeltas(entries []Entry) []Entry {
	out := make([]Entry, 0, len(entries))
	lastKey := ""
	var lastEv map[string]any
	for _, e := range entries {
		key, delta, ev, ok := deltaKey(e.Frame)
		if ok && key == lastKey && len(out) > 0 {
			lastEv["delta"] = lastEv["delta"].(string) + delta
			out[len(out)-1].Frame = chatFrame(lastEv)
			continue
		}
		out = append(out, e)
		lastKey, lastEv = "", nil
		if ok {
			lastKey, lastEv = key, ev
		}
	}
	return out
}

func chatFrame(ev map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"type": wire.ChatEvent{}.FrameType(), "event": ev})
	return b
}

// align lines up one stream (longest common subsequence of the normalized
// frames) and lists the differences; a missing and an extra frame of the
// same type next to each other are shown as one changed frame.
func align(expected []Entry, received [][]byte) []Difference {
	want := make([]string, len(expected))
	for i, e := range expected {
		want[i] = Normalize(e.Frame)
	}
	got := make([]string, len(received))
	for i, r := range received {
		got[i] = Normalize(r)
	}
	n, m := len(want), len(got)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if want[i] == got[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var diffs []Difference
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && want[i] == got[j]:
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			diffs = append(diffs, Difference{Kind: "extra", Got: got[j]})
			j++
		default:
			diffs = append(diffs, Difference{Kind: "missing", Line: expected[i].Line, Want: want[i]})
			i++
		}
	}
	return pairChanges(diffs)
}

// pairChanges merges a missing frame with an adjacent extra frame of the
// same type into one changed frame.
func pairChanges(diffs []Difference) []Difference {
	var out []Difference
	for k := 0; k < len(diffs); k++ {
		d := diffs[k]
		if k+1 < len(diffs) {
			e := diffs[k+1]
			if miss, extra, ok := missingAndExtra(d, e); ok && frameType(miss.Want) == frameType(extra.Got) {
				out = append(out, Difference{Kind: "changed", Line: miss.Line, Want: miss.Want, Got: extra.Got,
					Why: firstDifference(miss.Want, extra.Got)})
				k++
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

func missingAndExtra(a, b Difference) (Difference, Difference, bool) {
	switch {
	case a.Kind == "missing" && b.Kind == "extra":
		return a, b, true
	case a.Kind == "extra" && b.Kind == "missing":
		return b, a, true
	}
	return Difference{}, Difference{}, false
}

func frameType(norm string) string {
	t, _ := wire.PeekType([]byte(norm))
	return t
}

// firstDifference names the first path where two normalized frames differ.
func firstDifference(want, got string) string {
	var w, g any
	json.Unmarshal([]byte(want), &w)
	json.Unmarshal([]byte(got), &g)
	if p := diffPath(w, g, ""); p != "" {
		return p
	}
	return "the frames differ"
}

func diffPath(w, g any, path string) string {
	name := func(p string) string {
		if p == "" {
			return "the frame"
		}
		return p
	}
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			return name(path) + " is not an object"
		}
		keys := make([]string, 0, len(wv)+len(gv))
		for k := range wv {
			keys = append(keys, k)
		}
		for k := range gv {
			if _, ok := wv[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			x, inW := wv[k]
			y, inG := gv[k]
			switch {
			case !inG:
				return sub + " is missing"
			case !inW:
				return sub + " is not in the recording"
			}
			if p := diffPath(x, y, sub); p != "" {
				return p
			}
		}
		return ""
	case []any:
		gv, ok := g.([]any)
		if !ok {
			return name(path) + " is not an array"
		}
		for i := range min(len(wv), len(gv)) {
			if p := diffPath(wv[i], gv[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
		if len(wv) != len(gv) {
			return fmt.Sprintf("%s has %d elements, the recording %d", name(path), len(gv), len(wv))
		}
		return ""
	}
	wb, _ := json.Marshal(w)
	gb, _ := json.Marshal(g)
	if string(wb) != string(gb) {
		return fmt.Sprintf("%s is %s, recorded %s", name(path), clip(string(gb), 120), clip(string(wb), 120))
	}
	return ""
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
