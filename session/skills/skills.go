// Package skills discovers the agent's skills: directories holding a
// SKILL.md whose YAML front matter names and describes the skill, and whose
// body is the instructions the agent loads when a task calls for them.
//
// Skills come from five scopes, strongest first: the project
// (<root>/.infer/skills), the project's shared agent skills
// (<root>/.agents/skills), the user (<home>/skills), plugins
// (<home>/plugins/<plugin>/skills, named "<plugin>:<skill>"), and the
// catalog built into infer. A skill in a stronger scope shadows one of the
// same name in a weaker scope, so every name appears once.
//
// Discovery never fails as a whole: a missing directory is simply empty,
// and an unreadable directory, a skill with bad front matter or a symlink
// loop is skipped with a warning, so one broken skill never hides the rest.
// Only the direct children of a skills directory are looked at, which is
// also what keeps symlink cycles from being followed forever.
package skills

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Scope says where a skill was found. Its values are the protocol's scope
// names.
type Scope string

// Scopes, strongest first.
const (
	ScopeProject Scope = "project"
	ScopeAgents  Scope = "agents"
	ScopeUser    Scope = "user"
	ScopePlugin  Scope = "plugin"
	ScopeCatalog Scope = "catalog"
)

// Limits of the Agent Skills format.
const (
	maxNameLen        = 64
	maxDescriptionLen = 1024
	// maxSkillFile bounds what is read of a SKILL.md: instructions are
	// meant for a model's context, and a larger file is a mistake.
	maxSkillFile = 1 << 20
)

// Skill is one discovered skill.
type Skill struct {
	// Name is unique among discovered skills: the front matter's name, or
	// "<plugin>:<name>" for a plugin's skill.
	Name        string
	Description string
	Scope       Scope
	// Path is the skill's SKILL.md: a file path, or for catalog skills its
	// path inside the catalog.
	Path string

	fsys fs.FS  // where the skill lives
	file string // SKILL.md within fsys
}

// Body returns the skill's instructions: SKILL.md after its front matter.
// It reads the file afresh, so edits show without rediscovery.
func (s Skill) Body() (string, error) {
	if s.fsys == nil {
		return "", fmt.Errorf("skill %s: not a discovered skill", s.Name)
	}
	f, err := s.fsys.Open(s.file)
	if err != nil {
		return "", fmt.Errorf("skill %s: %w", s.Name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSkillFile+1))
	if err != nil {
		return "", fmt.Errorf("skill %s: reading %s: %w", s.Name, s.Path, err)
	}
	if len(data) > maxSkillFile {
		return "", fmt.Errorf("skill %s: %s is larger than %d bytes", s.Name, s.Path, maxSkillFile)
	}
	_, body, err := splitFrontMatter(data)
	if err != nil {
		return "", fmt.Errorf("skill %s: %s: %w", s.Name, s.Path, err)
	}
	return strings.TrimLeft(string(body), "\r\n"), nil
}

// Options says where to look. Empty fields skip their scopes.
type Options struct {
	// ProjectRoot is the project's root directory (.infer/skills and
	// .agents/skills are looked for under it).
	ProjectRoot string
	// Home is infer's home directory (skills/ and plugins/ under it).
	Home string
	// Catalog holds the built-in skills, one top-level directory per skill.
	Catalog fs.FS
}

// Discover finds every skill, resolves name conflicts by scope, and
// returns the skills sorted by name together with warnings about what was
// skipped.
func Discover(opts Options) ([]Skill, []error) {
	d := discovery{seen: map[string]bool{}}
	if opts.ProjectRoot != "" {
		d.scanDir(filepath.Join(opts.ProjectRoot, ".infer", "skills"), ScopeProject, "")
		d.scanDir(filepath.Join(opts.ProjectRoot, ".agents", "skills"), ScopeAgents, "")
	}
	if opts.Home != "" {
		d.scanDir(filepath.Join(opts.Home, "skills"), ScopeUser, "")
		d.scanPlugins(filepath.Join(opts.Home, "plugins"))
	}
	if opts.Catalog != nil {
		d.scan(opts.Catalog, ".", "", ScopeCatalog, "")
	}
	slices.SortFunc(d.skills, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return d.skills, d.warnings
}

// discovery accumulates skills in precedence order: the first skill of a
// name wins.
type discovery struct {
	skills   []Skill
	seen     map[string]bool
	warnings []error
}

func (d *discovery) warn(format string, args ...any) {
	d.warnings = append(d.warnings, fmt.Errorf(format, args...))
}

// scanDir scans a skills directory on disk.
func (d *discovery) scanDir(dir string, scope Scope, prefix string) {
	d.scan(os.DirFS(dir), ".", dir, scope, prefix)
}

// scanPlugins scans every plugin's skills directory.
func (d *discovery) scanPlugins(dir string) {
	fsys := os.DirFS(dir)
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			d.warn("skills: reading plugins in %s: %v", dir, cause(err))
		}
		return
	}
	for _, e := range entries {
		plugin := e.Name()
		if strings.HasPrefix(plugin, ".") || !d.isDir(fsys, plugin, filepath.Join(dir, plugin)) {
			continue
		}
		if err := checkName(plugin); err != nil {
			d.warn("skills: skipping plugin %s: plugin %v", filepath.Join(dir, plugin), err)
			continue
		}
		d.scanDir(filepath.Join(dir, plugin, "skills"), ScopePlugin, plugin+":")
	}
}

// scan looks at each direct child of root in fsys for a SKILL.md. shown is
// how root is named in paths and warnings ("" for a catalog).
func (d *discovery) scan(fsys fs.FS, root, shown string, scope Scope, prefix string) {
	display := func(name string) string {
		if shown == "" {
			return path.Join(root, name)
		}
		return filepath.Join(shown, filepath.FromSlash(name))
	}
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			d.warn("skills: reading %s skills in %s: %v", scope, display("."), cause(err))
		}
		return
	}
	for _, e := range entries {
		dirName := e.Name()
		if strings.HasPrefix(dirName, ".") {
			continue
		}
		dir := path.Join(root, dirName)
		if !d.isDir(fsys, dir, display(dirName)) {
			continue
		}
		file := path.Join(dir, "SKILL.md")
		shownFile := display(path.Join(dirName, "SKILL.md"))
		meta, err := readFrontMatter(fsys, file)
		if err == nil {
			err = meta.check(dirName)
		}
		if err != nil {
			d.warn("skills: skipping %s: %v", shownFile, err)
			continue
		}
		name := prefix + meta.Name
		if d.seen[name] {
			continue // shadowed by a stronger scope
		}
		d.seen[name] = true
		d.skills = append(d.skills, Skill{
			Name:        name,
			Description: strings.TrimSpace(meta.Description),
			Scope:       scope,
			Path:        shownFile,
			fsys:        fsys,
			file:        file,
		})
	}
}

// isDir follows symlinks; a dangling link or a loop is reported and
// skipped, and stray files are ignored.
func (d *discovery) isDir(fsys fs.FS, name, shown string) bool {
	info, err := fs.Stat(fsys, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			d.warn("skills: skipping %s: it is a symlink to a missing target", shown)
		} else {
			d.warn("skills: skipping %s: %v", shown, cause(err))
		}
		return false
	}
	return info.IsDir()
}

// cause drops the operation and relative path a *fs.PathError adds, since
// warnings already name the full path.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// frontMatter is the part of SKILL.md's front matter infer uses; other keys
// (allowed-tools, license, metadata…) are accepted and ignored.
type frontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// check validates the front matter of the skill in directory dirName.
func (m frontMatter) check(dirName string) error {
	if m.Name == "" {
		return errors.New("front matter has no name")
	}
	if err := checkName(m.Name); err != nil {
		return fmt.Errorf("name %w", err)
	}
	if m.Name != dirName {
		return fmt.Errorf("name %q does not match its directory %q; rename one to match", m.Name, dirName)
	}
	desc := strings.TrimSpace(m.Description)
	if desc == "" {
		return errors.New("front matter has no description")
	}
	if n := utf8.RuneCountInString(desc); n > maxDescriptionLen {
		return fmt.Errorf("description has %d characters; at most %d are allowed", n, maxDescriptionLen)
	}
	return nil
}

// checkName enforces the Agent Skills naming rule: 1-64 lowercase letters,
// digits and single hyphens, not at either end.
func checkName(name string) error {
	ok := len(name) > 0 && len(name) <= maxNameLen && name[0] != '-' && name[len(name)-1] != '-' && !strings.Contains(name, "--")
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%q is not valid: use 1-%d lowercase letters, digits and single hyphens, not starting or ending with a hyphen", name, maxNameLen)
	}
	return nil
}

// readFrontMatter reads and parses the front matter of file, reading no
// further than its closing line.
func readFrontMatter(fsys fs.FS, file string) (frontMatter, error) {
	f, err := fsys.Open(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return frontMatter{}, errors.New("no SKILL.md in the skill directory")
		}
		return frontMatter{}, err
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, maxSkillFile))
	var head bytes.Buffer
	for first := true; ; first = false {
		line, err := r.ReadBytes('\n')
		head.Write(line)
		if err != nil {
			break
		}
		if first && !isFence(bytes.TrimPrefix(line, bom)) || !first && isFence(line) {
			break
		}
	}
	yamlText, _, err := splitFrontMatter(head.Bytes())
	if err != nil {
		return frontMatter{}, err
	}
	var m frontMatter
	if err := yaml.Unmarshal(yamlText, &m); err != nil {
		return frontMatter{}, fmt.Errorf("front matter is not valid YAML: %v", err)
	}
	return m, nil
}

// splitFrontMatter separates a "---"-fenced YAML block at the start of data
// from the body after it.
func splitFrontMatter(data []byte) (yamlText, body []byte, err error) {
	data = bytes.TrimPrefix(data, bom)
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if !isFence(first) {
		return nil, nil, errors.New(`SKILL.md must start with front matter: a "---" line, YAML with name and description, and another "---" line`)
	}
	start := rest
	for len(rest) > 0 {
		line, next, _ := bytes.Cut(rest, []byte("\n"))
		if isFence(line) {
			return start[:len(start)-len(rest)], next, nil
		}
		rest = next
	}
	return nil, nil, errors.New(`front matter is not closed by a "---" line`)
}

// bom is the UTF-8 byte order mark some editors put first.
var bom = []byte("\ufeff")

// isFence reports whether line is a front matter delimiter.
func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r\n")) == "---"
}
