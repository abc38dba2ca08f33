package openai

import (
	"encoding/json"

	sdk "github.com/openai/openai-go/v3"
)

// providerDataKey is the key under which this adapter keeps state in
// llm.Message.ProviderData: OpenRouter's reasoning_details, as JSON.
const providerDataKey = "openrouter"

// reasoningDetails assembles the reasoning_details OpenRouter streams.
// Each chunk carries fragments of detail objects: the same index and type
// continue one object, whose text, summary and data grow fragment by
// fragment while fields such as signature, id and format arrive once. The
// assembled objects are what OpenRouter expects back on the next request.
type reasoningDetails struct {
	items []map[string]any
	at    map[string]int // index and type → position in items
}

// textFields are the detail fields that arrive in pieces.
var textFields = []string{"text", "summary", "data"}

func (r *reasoningDetails) add(d *sdk.ChatCompletionChunkChoiceDelta) {
	f, ok := d.JSON.ExtraFields["reasoning_details"]
	if !ok {
		return
	}
	var frags []map[string]any
	if json.Unmarshal([]byte(f.Raw()), &frags) != nil {
		return // not an array of objects: nothing we could send back
	}
	if r.at == nil {
		r.at = map[string]int{}
	}
	for _, frag := range frags {
		if frag == nil {
			continue
		}
		key, keyed := detailKey(frag)
		pos, known := r.at[key]
		if !keyed || !known {
			r.items = append(r.items, frag)
			if keyed {
				r.at[key] = len(r.items) - 1
			}
			continue
		}
		item := r.items[pos]
		for k, v := range frag {
			if isTextField(k) {
				if s, ok := v.(string); ok {
					prev, _ := item[k].(string)
					item[k] = prev + s
					continue
				}
			}
			if v != nil {
				item[k] = v
			}
		}
	}
}

// detailKey identifies the object a fragment belongs to; fragments without
// an index are objects of their own.
func detailKey(frag map[string]any) (string, bool) {
	idx, ok := frag["index"]
	if !ok {
		return "", false
	}
	b, _ := json.Marshal(idx)
	t, _ := frag["type"].(string)
	return t + "\x00" + string(b), true
}

func isTextField(k string) bool {
	for _, f := range textFields {
		if k == f {
			return true
		}
	}
	return false
}

// json returns the assembled array, or "" when none arrived.
func (r *reasoningDetails) json() string {
	if len(r.items) == 0 {
		return ""
	}
	b, err := json.Marshal(r.items)
	if err != nil {
		return ""
	}
	return string(b)
}
