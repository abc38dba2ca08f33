package gemini

import (
	"encoding/json"
	"strings"

	"google.golang.org/genai"

	"github.com/infer-workspace/infer/session/llm"
)

// accumulator assembles streamGenerateContent chunks and forwards deltas.
type accumulator struct {
	emit      func(llm.Delta)
	parts     []*genai.Part // every part as it came, for replay
	text      strings.Builder
	reasoning strings.Builder
	calls     []llm.ToolCall
	synthetic []string
	finish    genai.FinishReason
	blocked   string // why the answer was withheld, when it was
	usage     llm.Usage
	emitted   bool
	chunks    int // responses received
}

func (a *accumulator) send(d llm.Delta) {
	a.emitted = true
	a.emit(d)
}

func (a *accumulator) add(r *genai.GenerateContentResponse) {
	if r == nil {
		return
	}
	a.chunks++
	if u := r.UsageMetadata; u != nil {
		a.usage = llm.Usage{
			InputTokens:     int(u.PromptTokenCount + u.ToolUsePromptTokenCount),
			OutputTokens:    int(u.CandidatesTokenCount + u.ThoughtsTokenCount),
			ReasoningTokens: int(u.ThoughtsTokenCount),
		}
	}
	if pf := r.PromptFeedback; pf != nil && pf.BlockReason != "" {
		a.blocked = "the prompt was blocked: " + string(pf.BlockReason)
		if pf.BlockReasonMessage != "" {
			a.blocked += ", " + pf.BlockReasonMessage
		}
		a.finish = genai.FinishReasonOther
	}
	if len(r.Candidates) == 0 || r.Candidates[0] == nil {
		return
	}
	c := r.Candidates[0]
	if c.Content != nil {
		for _, part := range c.Content.Parts {
			if part != nil {
				a.part(part)
			}
		}
	}
	if c.FinishReason != "" {
		a.finish = c.FinishReason
		if withheld(c.FinishReason) && a.text.Len() == 0 && len(a.calls) == 0 {
			a.blocked = string(c.FinishReason)
			if c.FinishMessage != "" {
				a.blocked += ": " + c.FinishMessage
			}
		}
	}
}

func (a *accumulator) part(p *genai.Part) {
	a.parts = append(a.parts, p)
	switch {
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		id := fc.ID
		if id == "" {
			id = newCallID()
			a.synthetic = append(a.synthetic, id)
		}
		args := "{}"
		if len(fc.Args) > 0 {
			if raw, err := json.Marshal(fc.Args); err == nil {
				args = string(raw)
			}
		}
		idx := len(a.calls)
		a.calls = append(a.calls, llm.ToolCall{ID: id, Name: fc.Name, Arguments: args})
		a.send(llm.Delta{Kind: llm.ToolCallDelta, ToolCall: llm.ToolCallFragment{Index: idx, ID: id, Name: fc.Name, Arguments: args}})
	case p.Text == "":
	case p.Thought:
		a.reasoning.WriteString(p.Text)
		a.send(llm.Delta{Kind: llm.ReasoningDelta, Text: p.Text})
	default:
		a.text.WriteString(p.Text)
		a.send(llm.Delta{Kind: llm.TextDelta, Text: p.Text})
	}
}

// withheld reports finish reasons that mean the model's answer was held back.
func withheld(f genai.FinishReason) bool {
	switch f {
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonMalformedFunctionCall,
		genai.FinishReasonLanguage:
		return true
	}
	return false
}

func (a *accumulator) completion() llm.Completion {
	c := llm.Completion{Text: a.text.String(), Reasoning: a.reasoning.String(), ToolCalls: a.calls, Usage: a.usage}
	switch {
	case len(a.calls) > 0:
		c.FinishReason = "tool_calls"
	case a.finish == genai.FinishReasonStop:
		c.FinishReason = "stop"
	case a.finish == genai.FinishReasonMaxTokens:
		c.FinishReason = "length"
	default:
		c.FinishReason = strings.ToLower(string(a.finish))
	}
	c.ProviderData = encodeSaved(saved{Parts: a.parts, Synthetic: a.synthetic})
	return c
}
