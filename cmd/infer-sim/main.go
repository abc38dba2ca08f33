// Command infer-sim impersonates the browser extension: it dials a running
// infer's bridge, authenticates with the shared token, and answers browser
// commands from a fake browser or from real Chromium, reconnecting with
// backoff like the real extension. It can also be the extension's side
// panel (--panel), misbehave on purpose (the fault flags), record a session
// (--record), run a scripted scenario (run) and replay a recording
// (replay).
//
//	infer-sim [flags]                  be the extension until interrupted
//	infer-sim --panel [flags]          ... and type into its side panel
//	infer-sim run FILE [flags]         run a scenario (sim/scenario/README.md)
//	infer-sim replay FILE [flags]      replay a recording's extension side
//
// The token comes from --token, else $INFER_TOKEN, else extension.token in
// $INFER_HOME/browser_use.yaml (default ~/.infer); the port likewise falls
// back to extension.port there. Run with --help for every flag.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/infer-workspace/infer/sim"
	"github.com/infer-workspace/infer/sim/chrome"
	"github.com/infer-workspace/infer/sim/fakebrowser"
	"github.com/infer-workspace/infer/sim/recording"
	"github.com/infer-workspace/infer/sim/scenario"
)

const defaultPort = 52789

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "run":
			return runScenario(ctx, args[1:], getenv, stdout, stderr)
		case "replay":
			return runReplay(ctx, args[1:], getenv, stdout, stderr)
		}
	}
	s, err := parse(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "infer-sim:", err)
		return 2
	}
	return simulate(ctx, s, stdin, stdout, stderr)
}

// settings are the resolved command line of the extension mode.
type settings struct {
	url, token string
	verbose    bool
	quiet      bool
	panel      bool
	record     string
	profile    *sim.Profile
	browser    browserFlags
	faults     *sim.Faults
}

// browserFlags choose and configure the browser.
type browserFlags struct {
	kind, chromePath, chromeURL string
	headful                     bool
}

func (b *browserFlags) register(fs *flag.FlagSet, def string) {
	fs.StringVar(&b.kind, "browser", def, "the browser behind the extension: fake (built in, serves the demo site offline), chrome (Chromium) or minimal")
	fs.StringVar(&b.chromePath, "chrome-path", "", "Chromium to start (default: chromium, chromium-browser or google-chrome on PATH)")
	fs.StringVar(&b.chromeURL, "chrome-url", "", "attach to a running Chromium's DevTools address (ws://… or http://127.0.0.1:9222) instead of starting one")
	fs.BoolVar(&b.headful, "headful", false, "show Chromium's window instead of running headless")
}

// open starts the chosen browser; close releases it.
func (b browserFlags) open(ctx context.Context, profile *sim.Profile, log *slog.Logger) (sim.Browser, func(), error) {
	switch b.kind {
	case "fake", "":
		fb, err := fakebrowser.New(fakebrowser.Options{Profile: profile.Browser})
		if err != nil {
			return nil, nil, err
		}
		return fb, func() { fb.Close() }, nil
	case "chrome", "chromium":
		cb, err := chrome.New(ctx, chrome.Options{ExecPath: b.chromePath, URL: b.chromeURL, Headful: b.headful, Profile: profile.Browser, Logger: log})
		if err != nil {
			return nil, nil, err
		}
		return cb, func() {
			if err := cb.Close(); err != nil {
				log.Warn("closing Chromium", "err", err)
			}
		}, nil
	case "minimal":
		return &sim.Minimal{}, func() {}, nil
	}
	return nil, nil, fmt.Errorf("unknown --browser %q: use fake, chrome or minimal", b.kind)
}

func (b browserFlags) check() error {
	switch b.kind {
	case "", "fake", "chrome", "chromium", "minimal":
	default:
		return fmt.Errorf("unknown --browser %q: use fake, chrome or minimal", b.kind)
	}
	if b.kind != "chrome" && b.kind != "chromium" && (b.chromePath != "" || b.chromeURL != "" || b.headful) {
		return errors.New("--chrome-path, --chrome-url and --headful need --browser chrome")
	}
	if b.chromePath != "" && b.chromeURL != "" {
		return errors.New("--chrome-path starts a browser and --chrome-url attaches to one: use one")
	}
	return nil
}

// connFlags are the flags that say how to reach infer.
type connFlags struct {
	url, token string
	port       int
}

func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.url, "url", "", "bridge WebSocket URL (default ws://127.0.0.1:<port>/ws)")
	fs.IntVar(&c.port, "port", 0, "bridge port on 127.0.0.1 (default extension.port from browser_use.yaml, else 52789)")
	fs.StringVar(&c.token, "token", "", "pairing token (default $INFER_TOKEN, else extension.token from browser_use.yaml)")
}

// resolve fills in the URL and token from the environment and
// browser_use.yaml.
func (c connFlags) resolve(getenv func(string) string) (url, token string, err error) {
	if c.url != "" && c.port != 0 {
		return "", "", errors.New("--url and --port both given: use one")
	}
	if err := checkPort(c.port); err != nil {
		return "", "", fmt.Errorf("--port %w", err)
	}
	if c.url != "" {
		if err := checkWSURL(c.url); err != nil {
			return "", "", fmt.Errorf("--url %q: %w", c.url, err)
		}
	}
	url, token = c.url, c.token
	if token == "" {
		token = getenv("INFER_TOKEN")
	}
	if url == "" || token == "" {
		cfg, path, err := readBrowserUse(getenv)
		if err != nil {
			return "", "", err
		}
		if token == "" {
			token = cfg.Extension.Token
		}
		if url == "" {
			p := c.port
			if p == 0 {
				p = cfg.Extension.Port
				if err := checkPort(p); err != nil {
					return "", "", fmt.Errorf("extension.port in %s: %w", path, err)
				}
			}
			if p == 0 {
				p = defaultPort
			}
			url = "ws://127.0.0.1:" + strconv.Itoa(p) + "/ws"
		}
		if token == "" {
			return "", "", fmt.Errorf("no token: pass --token, set INFER_TOKEN, or run `infer init` to create %s", path)
		}
	}
	return url, token, nil
}

// checkPort rejects a port no TCP connection can use; 0 means "not
// given". Caught here, a typo is a usage error at start-up: the dialer
// would only fail with "invalid port" and retry it until killed.
func checkPort(p int) error {
	if p < 0 || p > 65535 {
		return fmt.Errorf("%d: use a number from 1 to 65535", p)
	}
	return nil
}

// checkWSURL rejects a URL the WebSocket dialer can never dial (another
// scheme, no host, user info, a port out of range), which it would
// otherwise retry forever as "malformed ws or wss URL".
func checkWSURL(raw string) error {
	const want = "use ws://HOST:PORT/PATH or wss://…, such as ws://127.0.0.1:52789/ws"
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL (%v); %s", errors.Unwrap(err), want)
	case u.Scheme != "ws" && u.Scheme != "wss":
		return fmt.Errorf("scheme %q is not ws or wss; %s", u.Scheme, want)
	case u.Hostname() == "":
		return fmt.Errorf("no host; %s", want)
	case u.User != nil:
		return fmt.Errorf("user info is not allowed; %s", want)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %s: use a number from 1 to 65535", p)
		}
	}
	return nil
}

// faultFlags are the fault injection flags.
type faultFlags struct {
	f    sim.Faults
	seed string
}

func (ff *faultFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&ff.f.Latency, "latency", 0, "fault: wait this long before acting on each browser command")
	fs.Float64Var(&ff.f.DropResults, "drop-results", 0, "fault: probability (0..1) that a browser result is never sent")
	fs.Float64Var(&ff.f.DuplicateResults, "duplicate-results", 0, "fault: probability (0..1) that a browser result is sent twice")
	fs.DurationVar(&ff.f.Late, "late", 0, "fault: send every result this long after its command arrived, even past its timeout")
	fs.Float64Var(&ff.f.Malformed, "malformed", 0, "fault: probability (0..1) that a malformed frame precedes a result")
	fs.IntVar(&ff.f.DisconnectAfter, "disconnect-after", 0, "fault: drop the connection when the Nth browser command arrives, unanswered")
	fs.IntVar(&ff.f.ReconnectStorm, "reconnect-storm", 0, "fault: connect and disconnect N times in quick succession first")
	fs.BoolVar(&ff.f.WrongToken, "wrong-token", false, "fault: present a wrong token (infer must refuse every hello)")
	fs.StringVar(&ff.seed, "seed", "", "seed of the fault probabilities, to repeat a run exactly (default: random, logged)")
}

// faults returns the configured faults, or nil when none is set.
func (ff *faultFlags) faults() (*sim.Faults, error) {
	f := &ff.f
	if ff.seed != "" {
		seed, err := strconv.ParseUint(ff.seed, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--seed %q is not a whole number", ff.seed)
		}
		f.Seed = seed
	} else {
		f.Seed = uint64(time.Now().UnixNano())
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if !f.Active() {
		return nil, nil
	}
	return f, nil
}

// parse resolves the extension mode's flags, environment and
// browser_use.yaml into settings.
func parse(args []string, getenv func(string) string, stderr io.Writer) (settings, error) {
	fs := flag.NewFlagSet("infer-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `infer-sim impersonates the browser extension for a running infer.

usage:
  infer-sim [flags]              be the extension until interrupted
  infer-sim --panel [flags]      ... and type into its side panel (help lists the commands)
  infer-sim run FILE [flags]     run a scenario file (see sim/scenario/README.md)
  infer-sim replay FILE [flags]  replay a recording's extension side and compare infer's answers

flags:
`)
		fs.PrintDefaults()
	}
	var conn connFlags
	conn.register(fs)
	var s settings
	var profile string
	fs.BoolVar(&s.verbose, "verbose", false, "log debug details and show every frame")
	fs.BoolVar(&s.quiet, "quiet", false, "with --panel, show only the conversation")
	fs.BoolVar(&s.panel, "panel", false, "be the side panel too: read panel commands and messages from stdin and show the chat")
	fs.StringVar(&s.record, "record", "", "record every frame to this file (JSON lines, token redacted)")
	fs.StringVar(&profile, "profile", "", "extension to impersonate: contract (default) or opentask-1.12.1")
	s.browser.register(fs, "fake")
	var ff faultFlags
	ff.register(fs)
	if err := fs.Parse(args); err != nil {
		return settings{}, err
	}
	if fs.NArg() > 0 {
		return settings{}, fmt.Errorf("unexpected arguments %q (see --help)", fs.Args())
	}
	if s.quiet && s.verbose {
		return settings{}, errors.New("--quiet and --verbose both given: use one")
	}
	var err error
	if s.profile, err = sim.ProfileByName(profile); err != nil {
		return settings{}, err
	}
	if err := s.browser.check(); err != nil {
		return settings{}, err
	}
	if s.faults, err = ff.faults(); err != nil {
		return settings{}, err
	}
	if s.url, s.token, err = conn.resolve(getenv); err != nil {
		return settings{}, err
	}
	return s, nil
}

// simulate is the extension mode.
func simulate(ctx context.Context, s settings, stdin io.Reader, stdout, stderr io.Writer) int {
	level := slog.LevelInfo
	switch {
	case s.verbose:
		level = slog.LevelDebug
	case s.panel:
		level = slog.LevelWarn // the panel's own lines say what happens
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	browser, closeBrowser, err := s.browser.open(ctx, s.profile, log)
	if err != nil {
		fmt.Fprintln(stderr, "infer-sim:", err)
		return 1
	}
	defer closeBrowser()

	out := &lockedWriter{w: stdout}
	var renderer *sim.Renderer
	if s.panel {
		renderer = sim.NewRenderer(out, sim.RenderOptions{Quiet: s.quiet, Verbose: s.verbose, Color: isTerminal(stdout)})
	}
	var taps []sim.Tap
	if s.record != "" {
		w, f, err := recording.Create(s.record)
		if err != nil {
			fmt.Fprintln(stderr, "infer-sim:", err)
			return 1
		}
		defer func() {
			if err := w.Err(); err != nil {
				fmt.Fprintln(stderr, "infer-sim:", err)
			}
			f.Close()
		}()
		taps = append(taps, w)
	}
	if s.verbose {
		trace := stderr
		if renderer != nil {
			trace = out
		}
		taps = append(taps, frameTrace(trace, renderer))
	}
	if s.faults != nil {
		log.Warn("infer-sim: injecting faults", "faults", s.faults.String())
	}
	log.Info("infer-sim: dialling infer", "url", s.url, "profile", s.profile.String(), "browser", s.browser.kind)
	client := sim.NewClient(sim.ClientOptions{
		URL: s.url, Token: s.token, Profile: s.profile,
		Browser: s.faults.Browser(browser), Faults: s.faults, Tap: sim.Taps(taps...),
		Logger: log,
	})
	if !s.panel {
		if err := client.Run(ctx); err != nil {
			fmt.Fprintln(stderr, "infer-sim:", err)
			return 1
		}
		return 0
	}
	return panelLoop(ctx, client, renderer, stdin, stderr)
}

// panelLoop runs the client, shows infer's frames and executes the lines
// typed on stdin until quit, end of input or ctx.
func panelLoop(ctx context.Context, client *sim.Client, r *sim.Renderer, stdin io.Reader, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub := client.Subscribe()
	defer sub.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	runErr := make(chan error, 1)
	wg.Go(func() { runErr <- client.Run(ctx) })
	wg.Go(func() {
		for {
			f, err := sub.Next(ctx)
			if err != nil {
				return
			}
			r.Frame(f)
		}
	})
	r.Println(fmt.Sprintf("infer-sim panel (%s). Type a message, or help for the commands.", client.Profile()))
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	if err := client.WaitConnected(wctx); err != nil {
		r.Println(fmt.Sprintf("not connected yet (%v); retrying in the background", client.LastError()))
	} else {
		r.Println("connected to infer")
	}
	wcancel()

	// A read from stdin cannot be cancelled, so this goroutine is not
	// waited for: it ends at the next line or at the end of input, and the
	// process's exit ends it otherwise.
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	panel := sim.NewPanel(client)
	for {
		select {
		case <-ctx.Done():
			return 0
		case err := <-runErr:
			if err != nil {
				fmt.Fprintln(stderr, "infer-sim:", err)
				return 1
			}
			return 0
		case line, ok := <-lines:
			if !ok {
				cancel()
				return 0
			}
			msg, err := panel.Exec(ctx, line)
			switch {
			case errors.Is(err, sim.ErrQuit):
				cancel()
				return 0
			case err != nil:
				r.Println("! " + err.Error())
			case msg != "":
				r.Println(msg)
			}
		}
	}
}

// frameTrace prints every frame, clipped, for --verbose.
func frameTrace(w io.Writer, r *sim.Renderer) sim.Tap {
	var mu sync.Mutex
	return sim.TapFunc(func(dir sim.Direction, data []byte) {
		arrow := "‹"
		if dir == sim.ExtToSrv {
			arrow = "›"
		}
		s := string(data)
		if len(s) > 400 {
			s = s[:400] + "…"
		}
		line := arrow + " " + s
		if r != nil {
			r.Println(line)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, line)
	})
}

// subcommandLogger is the log of run and replay, which print their own
// progress: warnings only, everything with --verbose.
func subcommandLogger(w io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// lockedWriter serializes writes from the renderer and the prompt.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runScenario is `infer-sim run FILE`.
func runScenario(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("infer-sim run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: infer-sim run FILE [flags]\n\nRuns a scenario (sim/scenario/README.md) against a running infer; exits 0 when every step passes.\n\nflags:\n")
		fs.PrintDefaults()
	}
	var conn connFlags
	conn.register(fs)
	var bf browserFlags
	bf.register(fs, "")
	record := fs.String("record", "", "record every frame to this file")
	verbose := fs.Bool("verbose", false, "log the client's diagnostics")
	var ff faultFlags
	ff.register(fs)
	file, rest := splitFile(args)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 || file == "" {
		fmt.Fprintln(stderr, "infer-sim run: give exactly one scenario file (see --help)")
		return 2
	}
	if err := bf.check(); err != nil {
		fmt.Fprintln(stderr, "infer-sim run:", err)
		return 2
	}
	faults, err := ff.faults()
	if err != nil {
		fmt.Fprintln(stderr, "infer-sim run:", err)
		return 2
	}
	url, token, err := conn.resolve(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "infer-sim run:", err)
		return 2
	}
	sc, err := scenario.Load(file)
	if err != nil {
		fmt.Fprintln(stderr, "infer-sim run:", err)
		return 2
	}
	log := subcommandLogger(stderr, *verbose)
	opts := scenario.Options{URL: url, Token: token, Faults: faults, Progress: stdout, Logger: log}
	if bf.kind != "" {
		profile, _ := sim.ProfileByName(sc.Profile)
		b, closeBrowser, err := bf.open(ctx, profile, log)
		if err != nil {
			fmt.Fprintln(stderr, "infer-sim run:", err)
			return 1
		}
		defer closeBrowser()
		opts.Browser = b
	}
	if *record != "" {
		w, f, err := recording.Create(*record)
		if err != nil {
			fmt.Fprintln(stderr, "infer-sim run:", err)
			return 1
		}
		defer f.Close()
		opts.Tap = w
	}
	fmt.Fprintf(stdout, "scenario %s: %s\n", file, sc.Name)
	if err := sc.Run(ctx, opts); err != nil {
		fmt.Fprintln(stderr, "FAIL", err)
		return 1
	}
	fmt.Fprintf(stdout, "PASS %s (%d steps)\n", file, len(sc.Steps))
	return 0
}

// runReplay is `infer-sim replay FILE`.
func runReplay(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("infer-sim replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: infer-sim replay FILE [flags]\n\nPlays a recording's extension side against a running infer and reports where infer's answers differ\nfrom the recorded ones (ids, timestamps and uuids ignored). Exits 0 when they are equivalent.\n\nflags:\n")
		fs.PrintDefaults()
	}
	var conn connFlags
	conn.register(fs)
	extOnly := fs.Bool("ext-only", false, "only check that infer accepts every recorded extension frame without closing the connection")
	settle := fs.Duration("settle", 500*time.Millisecond, "how long infer may stay quiet before the next recorded frame is sent anyway")
	timeout := fs.Duration("timeout", 15*time.Second, "how long to wait for infer's frames at most")
	verbose := fs.Bool("verbose", false, "log the client's diagnostics")
	file, rest := splitFile(args)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 || file == "" {
		fmt.Fprintln(stderr, "infer-sim replay: give exactly one recording file (see --help)")
		return 2
	}
	url, token, err := conn.resolve(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "infer-sim replay:", err)
		return 2
	}
	entries, err := recording.Load(file)
	if err != nil {
		fmt.Fprintln(stderr, "infer-sim replay:", err)
		return 2
	}
	rep, err := recording.Replay(ctx, entries, recording.ReplayOptions{
		URL: url, Token: token, ExtOnly: *extOnly, Settle: *settle, Timeout: *timeout,
		Logger: subcommandLogger(stderr, *verbose),
	})
	if err != nil {
		fmt.Fprintln(stderr, "infer-sim replay:", err)
		return 1
	}
	fmt.Fprintln(stdout, rep)
	if !rep.Equivalent() {
		return 1
	}
	return 0
}

// splitFile takes the file argument off the front, so flags may follow it.
func splitFile(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

// browserUse is the part of browser_use.yaml infer-sim needs.
type browserUse struct {
	Extension struct {
		Port  int    `yaml:"port"`
		Token string `yaml:"token"`
	} `yaml:"extension"`
}

// readBrowserUse reads $INFER_HOME/browser_use.yaml; a missing file is
// not an error (flags and environment may be enough).
func readBrowserUse(getenv func(string) string) (browserUse, string, error) {
	var cfg browserUse
	home := getenv("INFER_HOME")
	if home == "" {
		userHome, err := os.UserHomeDir()
		if err != nil {
			return cfg, "", fmt.Errorf("cannot find the home directory (set INFER_HOME): %w", err)
		}
		home = filepath.Join(userHome, ".infer")
	}
	path := filepath.Join(home, "browser_use.yaml")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, path, nil
	}
	if err != nil {
		return cfg, path, fmt.Errorf("read %s: %w", path, err)
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return cfg, path, fmt.Errorf("%s is not valid YAML: %w", path, err)
	}
	return cfg, path, nil
}
