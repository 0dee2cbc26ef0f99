package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
)

// template is what the post-processor adds around the ids of one text when
// special tokens are asked for (EncodeSpecial): HuggingFace's
// TemplateProcessing "single" template, split at its sequence.
type template struct {
	prefix, suffix []int
}

// parsePostProcessor reads the post-processor: none, ByteLevel (which only
// adjusts offsets), TemplateProcessing, or a Sequence of those.
func parsePostProcessor(raw json.RawMessage) (template, error) {
	var tp template
	if isNull(raw) {
		return tp, nil
	}
	var c componentJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return tp, err
	}
	if err := checkComponent("post_processor", c.Type, raw); err != nil {
		return tp, err
	}
	list := []componentJSON{c}
	if c.Type == "Sequence" {
		list = list[:0]
		for _, p := range c.Processors {
			var pc componentJSON
			if err := json.Unmarshal(p, &pc); err != nil {
				return tp, err
			}
			if err := checkComponent("post_processor", pc.Type, p); err != nil {
				return tp, err
			}
			list = append(list, pc)
		}
	}
	seen := false
	for _, pc := range list {
		switch pc.Type {
		case "ByteLevel":
		case "TemplateProcessing":
			if seen {
				return tp, errors.New("two TemplateProcessing steps are not supported")
			}
			seen = true
			var err error
			if tp, err = parseTemplate(&pc); err != nil {
				return tp, fmt.Errorf("TemplateProcessing: %w", err)
			}
		default:
			return tp, fmt.Errorf("post-processor %q is not supported (only ByteLevel, TemplateProcessing and Sequence)", pc.Type)
		}
	}
	return tp, nil
}

// parseTemplate reads the single template: special tokens around one
// sequence, A. The pair template is not read: this package encodes one text
// at a time, and a template that needs the second sequence, B, is refused.
func parseTemplate(c *componentJSON) (template, error) {
	var tp template
	if len(c.Single) == 0 {
		return tp, errors.New("no single template")
	}
	seq := false
	for i, item := range c.Single {
		switch {
		case item.Sequence != nil && item.SpecialToken == nil:
			if id := item.Sequence.ID; id != "A" {
				return tp, fmt.Errorf("the single template uses sequence %q, which only a pair of texts has; only sequence A is supported", id)
			}
			if seq {
				return tp, errors.New("the single template repeats sequence A, which is not supported")
			}
			seq = true
		case item.SpecialToken != nil && item.Sequence == nil:
			st, ok := c.SpecialTokens[item.SpecialToken.ID]
			if !ok {
				return tp, fmt.Errorf("the single template's special token %q is not in special_tokens", item.SpecialToken.ID)
			}
			if seq {
				tp.suffix = append(tp.suffix, st.IDs...)
			} else {
				tp.prefix = append(tp.prefix, st.IDs...)
			}
		default:
			return tp, fmt.Errorf("single template item %d is neither a SpecialToken nor a Sequence", i)
		}
	}
	if !seq {
		return tp, errors.New("the single template has no sequence A")
	}
	return tp, nil
}
