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
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/sim"
	"github.com/infer-workspace/infer/sim/chrome"
	"github.com/infer-workspace/infer/sim/fakebrowser"
	"github.com/infer-workspace/infer/sim/recording"
	"github.com/infer-workspace/infer/sim/scenario"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// Exit codes: a failure once running, and a mistake on the command line
// (a bad flag, value, file or setting), which nothing was started for.
const (
	exitFailure = 1
	exitUsage   = 2
)

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cli{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	c.extension = c.simulate
	return c.execute(ctx, args)
}

// cli is one invocation: its environment and streams, and the exit code
// its command settled on. Every error a command returns is a usage error
// (exit 2); the modes report their own failures and set code.
type cli struct {
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
	// extension runs the extension mode once its flags are resolved: the
	// simulator itself, or a test's look at the settings.
	extension func(ctx context.Context, s settings) int
	code      int
}

// execute runs the command line and returns the exit code. Errors are one
// line, "infer-sim: …" or "infer-sim run: …", without the usage under
// them: --help has it.
func (c *cli) execute(ctx context.Context, args []string) int {
	root := c.rootCmd()
	root.SetArgs(args)
	root.SetIn(c.stdin)
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		if cmd == nil {
			cmd = root
		}
		fmt.Fprintf(c.stderr, "%s: %v\n", cmd.CommandPath(), err)
		return exitUsage
	}
	return c.code
}

const rootLong = `infer-sim impersonates infer's browser extension, so infer can be tried,
tested and demonstrated without a browser. It dials a running infer's bridge
on 127.0.0.1, authenticates with the pairing token, and answers infer's
browser commands (navigate, click, type, read, screenshot, tabs) from a
browser of its choice:

  fake     built in: parses HTML, fills forms, redacts passwords, and serves
           the demo site http://demo.infer.localhost offline (default)
  chrome   real Chromium through DevTools, headless unless --headful; one
           it starts reaches the demo site too, served by infer-sim
  minimal  canned answers, for tests that only need something connected

Like the real extension it reconnects with backoff whenever the connection
fails or drops, until interrupted; if nothing answers on the port it says
so once and keeps trying, so it may be started before infer.

With --panel it is the extension's side panel too: type a message to send
it to the agent, or a command (help lists them: approve, reject, mode, new,
resume, tool, quit, …), and infer's answers are printed as they stream.

Where it connects: --url, else ws://127.0.0.1:<port>/ws with --port, else
extension.port from $INFER_HOME/browser_use.yaml (default ~/.infer), else
52789. The token: --token, else $INFER_TOKEN, else extension.token from the
same file, which ` + "`infer init`" + ` writes. The file is read and checked as infer
reads it, so a mistake in it is reported with its line. A token from the file
is read again before every connection attempt, so after
` + "`infer init --rotate-token`" + ` it reconnects with the new one.

The fault flags make it misbehave as a flaky extension or network would,
for reliability tests; --seed repeats a run's random choices exactly.

Exit codes: 0 when interrupted or on quit, 1 when it fails, 2 for a
mistake on the command line or in browser_use.yaml.`

const rootExample = `  infer-sim                                  the fake browser, port and token from ~/.infer
  infer-sim --panel                          ... and a side panel to type into
  infer-sim --browser chrome --headful       real Chromium, with its window
  infer-sim --profile opentask-1.12.1        exactly what the real opentask 1.12.1 sends
  infer-sim --record session.jsonl           record every frame, token redacted
  infer-sim --drop-results 0.2 --latency 50ms --disconnect-after 30
  infer-sim run assets/scenarios/browse-demo.yaml
  infer-sim replay session.jsonl --ext-only`

// rootCmd is the extension mode with the run and replay subcommands.
func (c *cli) rootCmd() *cobra.Command {
	var f extFlags
	root := &cobra.Command{
		Use:     "infer-sim [flags]",
		Short:   "Impersonate infer's browser extension (and its side panel) for a running infer",
		Long:    rootLong,
		Example: rootExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unexpected arguments %q", args)
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf("; did you mean %q?", s[0])
			}
			return errors.New(msg + " (see --help)")
		},
		SilenceErrors: true, // execute prints them, one line each
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := f.settings(c.getenv)
			if err != nil {
				return err
			}
			c.code = c.extension(cmd.Context(), s)
			return nil
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SuggestionsMinimumDistance = 2
	root.SetFlagErrorFunc(flagError)
	f.register(root.Flags())
	root.AddCommand(c.runCmd(), c.replayCmd())
	return root
}

// flagError points from a flag cobra could not parse to the help.
func flagError(_ *cobra.Command, err error) error {
	return fmt.Errorf("%w (see --help)", err)
}

// oneFile is the positional check of run and replay.
func oneFile(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("give exactly one %s file (see --help)", what)
		}
		return nil
	}
}

// extFlags are the extension mode's flags before resolution.
type extFlags struct {
	conn                  connFlags
	verbose, quiet, panel bool
	record, profile       string
	browser               browserFlags
	faults                faultFlags
}

func (f *extFlags) register(fs *pflag.FlagSet) {
	f.conn.register(fs)
	fs.BoolVar(&f.verbose, "verbose", false, "log debug details and show every frame")
	fs.BoolVar(&f.quiet, "quiet", false, "with --panel, show only the conversation")
	fs.BoolVar(&f.panel, "panel", false, "be the side panel too: read panel commands and messages from stdin and show the chat")
	fs.StringVar(&f.record, "record", "", "record every frame to this file (JSON lines, token redacted)")
	fs.StringVar(&f.profile, "profile", "", "extension to impersonate: contract (default) or opentask-1.12.1")
	f.browser.register(fs, "fake")
	f.faults.register(fs)
}

// settings resolves the flags, the environment and browser_use.yaml.
func (f *extFlags) settings(getenv func(string) string) (settings, error) {
	s := settings{verbose: f.verbose, quiet: f.quiet, panel: f.panel, record: f.record, browser: f.browser}
	if s.quiet && s.verbose {
		return settings{}, errors.New("--quiet and --verbose both given: use one")
	}
	var err error
	if s.profile, err = sim.ProfileByName(f.profile); err != nil {
		return settings{}, err
	}
	if err := s.browser.check(); err != nil {
		return settings{}, err
	}
	if s.faults, err = f.faults.faults(); err != nil {
		return settings{}, err
	}
	if s.url, s.token, err = f.conn.resolve(getenv); err != nil {
		return settings{}, err
	}
	if f.conn.token == "" && getenv("INFER_TOKEN") == "" {
		// The token is browser_use.yaml's: follow it when `infer init
		// --rotate-token` replaces it, as the person would by pasting the
		// new one into the real extension.
		s.reloadToken = func() (string, error) {
			bu, _, err := readBrowserUse(getenv)
			return bu.Extension.Token, err
		}
	}
	return s, nil
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
	// reloadToken reads the token again before each connection attempt;
	// nil when --token or INFER_TOKEN gave it.
	reloadToken func() (string, error)
}

// browserFlags choose and configure the browser.
type browserFlags struct {
	kind, chromePath, chromeURL string
	headful                     bool
}

func (b *browserFlags) register(fs *pflag.FlagSet, def string) {
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
		cb, err := chrome.New(ctx, chrome.Options{ExecPath: b.chromePath, URL: b.chromeURL, Headful: b.headful, Profile: profile.Browser, Logger: log,
			Sites: map[string]http.Handler{assets.DemoHost: assets.DemoSiteHandler()}})
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

func (c *connFlags) register(fs *pflag.FlagSet) {
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
		bu, path, err := readBrowserUse(getenv)
		if err != nil {
			return "", "", err
		}
		if token == "" {
			token = bu.Extension.Token
		}
		if url == "" {
			p := c.port
			if p == 0 {
				p = bu.Extension.Port
			}
			url = "ws://127.0.0.1:" + strconv.Itoa(p) + "/ws"
		}
		if token == "" {
			return "", "", fmt.Errorf("no token: pass --token, set INFER_TOKEN, or run `infer init` to create %s", config.DisplayPath(path))
		}
	}
	return url, token, nil
}

// readBrowserUse reads browser_use.yaml from infer's home as infer does,
// with the same checks and messages. A missing file is not an error: the
// flags and environment may say enough; it reads as the defaults (port
// 52789, no token).
func readBrowserUse(getenv func(string) string) (config.BrowserUse, string, error) {
	home, err := config.HomeFrom(getenv)
	if err != nil {
		return config.BrowserUse{}, "", err
	}
	path := config.BrowserUsePath(home)
	bu, _, err := config.LoadBrowserUse(path)
	if errors.Is(err, fs.ErrNotExist) {
		return config.BrowserUse{Extension: config.ExtensionConfig{Port: config.DefaultPort}}, path, nil
	}
	return bu, path, err
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

func (ff *faultFlags) register(fs *pflag.FlagSet) {
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

// simulate is the extension mode.
func (c *cli) simulate(ctx context.Context, s settings) int {
	stdin, stdout, stderr := c.stdin, c.stdout, c.stderr
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
		URL: s.url, Token: s.token, ReloadToken: s.reloadToken, Profile: s.profile,
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

// runCmd is `infer-sim run FILE`.
func (c *cli) runCmd() *cobra.Command {
	var (
		conn    connFlags
		bf      browserFlags
		ff      faultFlags
		record  string
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "run FILE [flags]",
		Short: "Run a scenario file against a running infer",
		Long: `run plays a scenario (sim/scenario/README.md): the side panel's messages and
commands, the frames infer must send back, and scripted browser answers, one
step after another, each within the scenario's timeout. It prints each step
as it passes and exits 0 when every step did, or 1 with the step that failed,
what was expected and the closest frame infer sent instead.

The browser behind the scenario's commands is the scenario's own choice
unless --browser names one. The shipped scenarios are in assets/scenarios.`,
		Example: `  infer-sim run assets/scenarios/browse-demo.yaml
  infer-sim run assets/scenarios/approve-from-panel.yaml --port 40001 --record run.jsonl`,
		Args: oneFile("scenario"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := bf.check(); err != nil {
				return err
			}
			faults, err := ff.faults()
			if err != nil {
				return err
			}
			url, token, err := conn.resolve(c.getenv)
			if err != nil {
				return err
			}
			file := args[0]
			sc, err := scenario.Load(file)
			if err != nil {
				return err
			}
			c.code = c.runScenario(cmd.Context(), file, sc, bf, record, subcommandLogger(c.stderr, verbose),
				scenario.Options{URL: url, Token: token, Faults: faults, Progress: c.stdout})
			return nil
		},
	}
	fl := cmd.Flags()
	conn.register(fl)
	bf.register(fl, "")
	fl.StringVar(&record, "record", "", "record every frame to this file")
	fl.BoolVar(&verbose, "verbose", false, "log the client's diagnostics")
	ff.register(fl)
	return cmd
}

// runScenario runs a loaded scenario and returns the exit code.
func (c *cli) runScenario(ctx context.Context, file string, sc *scenario.Scenario, bf browserFlags, record string, log *slog.Logger, opts scenario.Options) int {
	opts.Logger = log
	if bf.kind != "" {
		profile, _ := sim.ProfileByName(sc.Profile)
		b, closeBrowser, err := bf.open(ctx, profile, log)
		if err != nil {
			fmt.Fprintln(c.stderr, "infer-sim run:", err)
			return exitFailure
		}
		defer closeBrowser()
		opts.Browser = b
	}
	if record != "" {
		w, f, err := recording.Create(record)
		if err != nil {
			fmt.Fprintln(c.stderr, "infer-sim run:", err)
			return exitFailure
		}
		defer f.Close()
		opts.Tap = w
	}
	fmt.Fprintf(c.stdout, "scenario %s: %s\n", file, sc.Name)
	if err := sc.Run(ctx, opts); err != nil {
		fmt.Fprintln(c.stderr, "FAIL", err)
		return exitFailure
	}
	fmt.Fprintf(c.stdout, "PASS %s (%d steps)\n", file, len(sc.Steps))
	return 0
}

// replayCmd is `infer-sim replay FILE`.
func (c *cli) replayCmd() *cobra.Command {
	var (
		conn            connFlags
		extOnly         bool
		settle, timeout time.Duration
		verbose         bool
	)
	cmd := &cobra.Command{
		Use:   "replay FILE [flags]",
		Short: "Replay a recording's extension side and compare infer's answers",
		Long: `replay plays the extension's side of a recording (made with --record, or the real
extension's in sim/recording/testdata) against a running infer, frame by frame, and reports
where infer's answers differ from the recorded ones; ids, timestamps and
uuids are ignored. It exits 0 when they are equivalent, 1 when they differ.

With --ext-only it only checks that infer accepts every recorded extension
frame without closing the connection, which is how a recording of another
extension version is checked against this infer.`,
		Example: `  infer-sim --record session.jsonl            (use infer, then stop it)
  infer-sim replay session.jsonl
  infer-sim replay sim/recording/testdata/opentask-1.12.1.jsonl --ext-only`,
		Args: oneFile("recording"),
		RunE: func(cmd *cobra.Command, args []string) error {
			url, token, err := conn.resolve(c.getenv)
			if err != nil {
				return err
			}
			entries, err := recording.Load(args[0])
			if err != nil {
				return err
			}
			rep, err := recording.Replay(cmd.Context(), entries, recording.ReplayOptions{
				URL: url, Token: token, ExtOnly: extOnly, Settle: settle, Timeout: timeout,
				Logger: subcommandLogger(c.stderr, verbose),
			})
			if err != nil {
				fmt.Fprintln(c.stderr, "infer-sim replay:", err)
				c.code = exitFailure
				return nil
			}
			fmt.Fprintln(c.stdout, rep)
			if !rep.Equivalent() {
				c.code = exitFailure
			}
			return nil
		},
	}
	fl := cmd.Flags()
	conn.register(fl)
	fl.BoolVar(&extOnly, "ext-only", false, "only check that infer accepts every recorded extension frame without closing the connection")
	fl.DurationVar(&settle, "settle", 500*time.Millisecond, "how long infer may stay quiet before the next recorded frame is sent anyway")
	fl.DurationVar(&timeout, "timeout", 15*time.Second, "how long to wait for infer's frames at most")
	fl.BoolVar(&verbose, "verbose", false, "log the client's diagnostics")
	return cmd
}
