package session

import (
	"strings"
	"sync"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
)

// settings holds the agent's mode, model, effort and temperature for the
// next turn, and publishes a SettingsChanged for every request to change
// one. Its methods are promoted to Workspace.
type settings struct {
	catalog   llm.Catalog
	overrides func(model string) (llm.Effort, *float64)
	publish   func(Event)
	// modeChanged tells the workspace a mode change happened (for the
	// notice and the log); it is called after the event.
	modeChanged func(old, cur tools.Mode, origin Origin)

	mu          sync.Mutex
	mode        tools.Mode
	model       string
	effort      llm.Effort
	temperature *float64
	// effortSet and temperatureSet record that the person chose a value
	// in this session, which then beats provider overrides.
	effortSet, temperatureSet bool
}

// Mode returns the agent mode.
func (s *settings) Mode() tools.Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// SetMode switches the agent mode on behalf of origin, which a notice
// names when the change did not come from the terminal. Unknown names are
// ignored and reported false; either way the current mode is returned and
// published (SettingsChanged), so the front end that asked is answered.
func (s *settings) SetMode(name string, origin Origin) (tools.Mode, bool) {
	m, ok := tools.ParseMode(name)
	s.mu.Lock()
	old := s.mode
	if ok {
		s.mode = m
	}
	cur := s.mode
	s.mu.Unlock()
	s.changed(SettingMode)
	if ok && cur != old {
		s.modeChanged(old, cur, origin)
	}
	return cur, ok
}

// CycleMode moves to the next mode (the TUI's shift+tab).
func (s *settings) CycleMode() tools.Mode {
	m, _ := s.SetMode(string(tools.Next(s.Mode())), tools.OriginTerminal)
	return m
}

// Settings returns the settings for the next turn.
func (s *settings) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Settings{Mode: s.mode, Model: s.model, Effort: s.effort, Temperature: s.temperature}
}

func (s *settings) changed(what Setting) {
	s.publish(SettingsChanged{Settings: s.Settings(), Changed: what})
}

// Model returns the current model id.
func (s *settings) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// Models returns the model ids the catalog offers, the default first.
func (s *settings) Models() []string { return s.catalog.Models() }

// Rejections lists what the model id rejected this session (a parameter
// its provider now leaves out or sends in another form), for the model's
// details; nil when nothing was rejected or the provider does not say.
func (s *settings) Rejections(id string) []string {
	p, model, err := s.catalog.Resolve(id)
	if err != nil {
		return nil
	}
	if r, ok := p.(llm.RejectionReporter); ok {
		return r.Rejections(model)
	}
	return nil
}

// ModelsChanged tells front ends the model list changed (e.g. discovery
// finished), so panels can ask again.
func (s *settings) ModelsChanged() { s.changed(SettingModels) }

// SelectModel switches the model for the next turn. An id the catalog
// cannot resolve is refused with its error and the model stays as it was;
// either way the model is published (SettingsChanged).
func (s *settings) SelectModel(id string) error {
	id = strings.TrimSpace(id)
	_, _, err := s.catalog.Resolve(id)
	if err == nil {
		s.mu.Lock()
		s.model = id
		s.mu.Unlock()
	}
	s.changed(SettingModel)
	return err
}

// Effort returns the reasoning effort for the next turn.
func (s *settings) Effort() llm.Effort {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.effort
}

// SetEffort sets the reasoning effort for the next turn.
func (s *settings) SetEffort(level string) error {
	e, err := llm.ParseEffort(level)
	if err == nil {
		s.mu.Lock()
		s.effort, s.effortSet = e, true
		s.mu.Unlock()
	}
	s.changed(SettingEffort)
	return err
}

// Temperature returns the sampling temperature (nil: provider default).
func (s *settings) Temperature() *float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.temperature
}

// SetTemperature sets the sampling temperature; nil restores the default.
func (s *settings) SetTemperature(t *float64) error {
	var err error
	if t != nil {
		err = llm.ValidateTemperature(*t)
	}
	if err == nil {
		s.mu.Lock()
		s.temperature, s.temperatureSet = t, true
		s.mu.Unlock()
	}
	s.changed(SettingTemperature)
	return err
}

// forTurn is what a turn starting now uses: the settings, with a
// provider's own effort and temperature where the person chose none in
// this session.
func (s *settings) forTurn() Settings {
	s.mu.Lock()
	cur := Settings{Mode: s.mode, Model: s.model, Effort: s.effort, Temperature: s.temperature}
	effortSet, tempSet := s.effortSet, s.temperatureSet
	s.mu.Unlock()
	if s.overrides != nil {
		oe, ot := s.overrides(cur.Model)
		if !effortSet && oe != "" && oe != llm.EffortAuto {
			cur.Effort = oe
		}
		if !tempSet && ot != nil {
			cur.Temperature = ot
		}
	}
	return cur
}
