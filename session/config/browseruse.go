package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Defaults and bounds of browser_use.yaml.
const (
	// DefaultPort is the loopback port the extension dials by default.
	DefaultPort = 52789
	// DefaultCommandTimeout bounds one browser command.
	DefaultCommandTimeout = 30 * time.Second
	// MinCommandTimeout and MaxCommandTimeout bound extension.command_timeout:
	// shorter fails real pages, longer leaves the agent waiting on a dead tab.
	MinCommandTimeout = time.Second
	MaxCommandTimeout = 10 * time.Minute
	// DefaultConnectWait is how long a browser call waits for an
	// extension to connect: the real one redials after 1, 2, 4, 8 and
	// 13.5 s, so a call made just after infer starts (or just after
	// another infer handed the port over) would otherwise fail while the
	// extension is on its way.
	DefaultConnectWait = 20 * time.Second
	// MaxConnectWait bounds extension.connect_wait: a call should fail
	// with a reason while the person is still there to read it.
	MaxConnectWait = 10 * time.Minute
	// BackendExtension is the only browser backend today.
	BackendExtension = "extension"
)

// rotateFix is the advice for every token problem.
const rotateFix = "run `infer init --rotate-token` to write a new one, then paste it into the extension's options"

// BrowserUse is browser_use.yaml: whether the extension bridge is on and
// how the extension reaches and authenticates to it.
type BrowserUse struct {
	// Enabled turns the bridge on.
	Enabled bool `yaml:"enabled"`
	// Backend is "extension", the only backend today.
	Backend string `yaml:"backend"`
	// Extension configures the extension bridge.
	Extension ExtensionConfig `yaml:"extension"`
}

// ExtensionConfig is the extension section of browser_use.yaml.
type ExtensionConfig struct {
	// Port is the loopback port infer listens on (1..65535, default 52789).
	Port int `yaml:"port"`
	// Token is the shared secret the extension sends in browser_hello.
	// Never print it except where the person asked for it.
	Token string `yaml:"token"`
	// CommandTimeout bounds one browser command (1s..10m, default 30s).
	CommandTimeout Duration `yaml:"command_timeout"`
	// ConnectWait is how long a browser call waits for an extension when
	// none is connected (0..10m, default 20s; 0 fails at once).
	ConnectWait Duration `yaml:"connect_wait"`
}

// NewBrowserUse returns the settings `infer init` writes: enabled, the
// extension backend, the given port (0 means DefaultPort), a fresh token and
// the default command timeout.
func NewBrowserUse(port int) BrowserUse {
	if port == 0 {
		port = DefaultPort
	}
	return BrowserUse{
		Enabled: true,
		Backend: BackendExtension,
		Extension: ExtensionConfig{
			Port:           port,
			Token:          NewToken(),
			CommandTimeout: Duration(DefaultCommandTimeout),
			ConnectWait:    Duration(DefaultConnectWait),
		},
	}
}

// WSURL is the address the extension dials.
func (b BrowserUse) WSURL() string {
	return "ws://" + b.Addr() + "/ws"
}

// Addr is the loopback host:port the bridge listens on.
func (b BrowserUse) Addr() string {
	return "127.0.0.1:" + strconv.Itoa(b.Extension.Port)
}

// String describes the settings with the token masked, so a stray log line
// cannot leak it.
func (b BrowserUse) String() string {
	return fmt.Sprintf("enabled=%t backend=%s port=%d token=%s command_timeout=%s connect_wait=%s",
		b.Enabled, b.Backend, b.Extension.Port, MaskToken(b.Extension.Token), b.Extension.CommandTimeout, b.Extension.ConnectWait)
}

// GoString masks the token under %#v too.
func (b BrowserUse) GoString() string { return "config.BrowserUse{" + b.String() + "}" }

// Validate checks concrete settings (defaults already applied): the errors
// name the key and the fix but no file.
func (b BrowserUse) Validate() error {
	problems := b.validate()
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

func (b BrowserUse) validate() []*FieldError {
	var ps []*FieldError
	add := func(key, problem, fix string) {
		ps = append(ps, &FieldError{Key: key, Problem: problem, Fix: fix})
	}
	if b.Backend != BackendExtension {
		add("backend", fmt.Sprintf("%s is not a known backend", quoteValue(b.Backend)), `use "extension" (the only backend today)`)
	}
	if p := b.Extension.Port; p < 1 || p > 65535 {
		add("extension.port", fmt.Sprintf("%d is not a valid port", p), fmt.Sprintf("use a number from 1 to 65535 (default %d)", DefaultPort))
	}
	if t := b.Extension.CommandTimeout.Std(); t < MinCommandTimeout || t > MaxCommandTimeout {
		add("extension.command_timeout", fmt.Sprintf("%s is out of range", b.Extension.CommandTimeout),
			fmt.Sprintf("use a duration from %s to %s (default %s)", Duration(MinCommandTimeout), Duration(MaxCommandTimeout), Duration(DefaultCommandTimeout)))
	}
	if w := b.Extension.ConnectWait.Std(); w < 0 || w > MaxConnectWait {
		add("extension.connect_wait", fmt.Sprintf("%s is out of range", b.Extension.ConnectWait),
			fmt.Sprintf("use a duration from 0s (fail at once) to %s (default %s)", Duration(MaxConnectWait), Duration(DefaultConnectWait)))
	}
	// The token matters only when the bridge is on, but a bad one is still
	// worth reporting rather than discovering at the next enable.
	tok := b.Extension.Token
	switch {
	case tok == "" && b.Enabled:
		add("extension.token", "is missing (required when enabled: true)", rotateFix)
	case tok == "":
	case strings.IndexFunc(tok, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		add("extension.token", "contains spaces or control characters, which do not survive copy and paste", rotateFix)
	case len(tok) < MinTokenLength:
		add("extension.token", fmt.Sprintf("is too short (%d characters; at least %d)", len(tok), MinTokenLength), rotateFix)
	}
	return ps
}

// LoadBrowserUse reads and validates browser_use.yaml. Absent keys take their
// defaults. Warnings (such as a token file readable by other users) do not
// stop loading. A missing file is an error matching fs.ErrNotExist that says
// to run `infer init`.
func LoadBrowserUse(path string) (BrowserUse, []string, error) {
	shown := DisplayPath(path)
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return BrowserUse{}, nil, &FieldError{File: shown, Problem: "does not exist", Fix: "run `infer init` to create it", Err: err}
		}
		return BrowserUse{}, nil, &FieldError{File: shown, Problem: "cannot be read: " + unwrapPathError(err), Fix: "check its permissions (it should be yours, mode 0600)", Err: err}
	}
	b, err := ParseBrowserUse(data, shown)
	if err != nil {
		return BrowserUse{}, nil, err
	}
	var warnings []string
	if w := permissionWarning(path, shown, b.Extension.Token != ""); w != "" {
		warnings = append(warnings, w)
	}
	return b, warnings, nil
}

// ParseBrowserUse decodes and validates browser_use.yaml contents; file is
// the name used in errors.
func ParseBrowserUse(data []byte, file string) (BrowserUse, error) {
	var b BrowserUse
	doc, err := parseStrict(data, file, &b)
	if err != nil {
		return BrowserUse{}, err
	}
	// Defaults fill only keys that are absent: "port: 0" is a mistake to
	// report, not a request for the default.
	if !doc.has("backend") {
		b.Backend = BackendExtension
	}
	if !doc.has("extension.port") {
		b.Extension.Port = DefaultPort
	}
	if !doc.has("extension.command_timeout") {
		b.Extension.CommandTimeout = Duration(DefaultCommandTimeout)
	}
	if !doc.has("extension.connect_wait") {
		b.Extension.ConnectWait = Duration(DefaultConnectWait)
	}
	if err := doc.locate(b.validate()); err != nil {
		return BrowserUse{}, err
	}
	return b, nil
}

// permissionWarning says when a file holding a secret is open to others.
func permissionWarning(path, shown string, holdsSecret bool) string {
	if !holdsSecret || isWindows() {
		return "" // Windows has no meaningful mode bits here
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("%s holds the pairing token but other users can access it (mode %04o); run `chmod 600 %s`",
		shown, fi.Mode().Perm(), shown)
}

// CreateBrowserUse writes b to path with mode 0600, refusing to replace an
// existing file (the error matches fs.ErrExist), so two `infer init`s cannot each
// print a token of which only one survives.
func CreateBrowserUse(path string, b BrowserUse) error {
	data, err := EncodeBrowserUse(b)
	if err != nil {
		return err
	}
	return CreateFileAtomic(path, data, 0o600)
}

// EncodeBrowserUse validates b and renders it as browser_use.yaml, with
// the comments a person reads beside each setting.
func EncodeBrowserUse(b BrowserUse) ([]byte, error) {
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("refusing to write invalid browser settings: %w", err)
	}
	var root yaml.Node
	if err := root.Encode(b); err != nil {
		return nil, fmt.Errorf("encode browser settings: %w", err)
	}
	comment(&root, "enabled", "Turns the extension bridge on or off.")
	comment(&root, "backend", "The only backend today: the browser extension, which dials infer.")
	if ext := valueOf(&root, "extension"); ext != nil {
		comment(ext, "port", "Loopback port infer listens on: ws://127.0.0.1:<port>/ws.\nSet the same port in the extension's options.")
		comment(ext, "token", "Shared secret the extension sends when it connects. Paste it into the\nextension's options; rotate it with `infer init --rotate-token`.")
		comment(ext, "command_timeout", "How long one browser command may take (1s to 10m).")
		comment(ext, "connect_wait", "How long a browser call waits for the extension to connect when none\nis (0s to 10m; 0s fails at once). The extension redials by itself.")
	}
	doc := &yaml.Node{
		Kind:        yaml.DocumentNode,
		HeadComment: "infer's browser bridge settings (written by `infer init`).\nThis file holds the pairing token: keep it private (mode 0600).",
		Content:     []*yaml.Node{&root},
	}
	return encodeYAML(doc)
}

// RotateToken replaces extension.token in the file at path with token and
// keeps every other value and, as far as yaml allows, the comments. The
// file is rewritten only if the result is valid.
func RotateToken(path, token string) (BrowserUse, error) {
	shown := DisplayPath(path)
	data, err := os.ReadFile(path)
	if err != nil {
		return BrowserUse{}, fmt.Errorf("rotate the token in %s: %w", shown, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, problem := splitYAMLLine(strings.TrimPrefix(err.Error(), "yaml: "))
		return BrowserUse{}, &FieldError{File: shown, Line: line, Problem: problem, Fix: "fix the YAML syntax, or move the file away and run `infer init`", Err: err}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || isNull(doc.Content[0]) {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return BrowserUse{}, &FieldError{File: shown, Line: root.Line, Problem: "the file must be a mapping of keys (key: value)", Fix: "move it away and run `infer init`"}
	}
	ext := valueOf(root, "extension")
	if ext == nil || isNull(ext) {
		ext = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		setValue(root, "extension", ext)
	}
	if ext.Kind != yaml.MappingNode {
		return BrowserUse{}, &FieldError{File: shown, Line: ext.Line, Key: "extension", Problem: "expected nested keys", Fix: "indent port, token and command_timeout under extension:"}
	}
	setValue(ext, "token", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: token})
	out, err := encodeYAML(&doc)
	if err != nil {
		return BrowserUse{}, err
	}
	b, err := ParseBrowserUse(out, shown)
	if err != nil {
		return BrowserUse{}, err
	}
	if err := WriteFileAtomic(path, out, 0o600); err != nil {
		return BrowserUse{}, err
	}
	return b, nil
}

// valueOf returns the value node of key in a mapping, or nil.
func valueOf(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setValue replaces key's value in a mapping, keeping the key's comments,
// or appends the pair.
func setValue(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			v.LineComment = old.LineComment
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// comment puts a comment above key in a mapping.
func comment(m *yaml.Node, key, text string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i].HeadComment = text
			return
		}
	}
}

func encodeYAML(n *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("encode YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode YAML: %w", err)
	}
	return buf.Bytes(), nil
}

// unwrapPathError drops the path an *fs.PathError repeats, since our
// messages already start with it.
func unwrapPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
