package tokenizer

import (
	"fmt"
	"slices"
)

// GGUFVocab returns the tokenizer metadata a GGUF file needs for llama.cpp
// to tokenize as t does, as HuggingFace's convert_hf_to_gguf.py writes it:
// tokens in byte-level text (added tokens as written, ids the vocabulary
// leaves unassigned as "[PAD<id>]" of type unused), added tokens typed
// control when tokenizer.json marks them special and user-defined
// otherwise, the merges in order,
// the bos, eos, pad and unk ids, add_bos_token from the post-processor, the
// chat template, and the name of llama.cpp's pre-tokenizer that is t's
// (Llama 3's, Qwen2's, SmolLM2's, GPT-2's or llama.cpp's default). Tokens
// has VocabSize entries; a writer pads it to the model's embedding rows
// with "[PAD<id>]" unused tokens, as convert_hf_to_gguf.py does.
//
// It is an error when no llama.cpp pre-tokenizer is t's, when llama.cpp's
// ignore_merges for it would change some token, or when the post-processor
// adds more than a BOS. A normalizer (Qwen's NFC) has no place in GGUF and
// is left out, as convert_hf_to_gguf.py leaves it out: llama.cpp encodes
// text that is not in that normal form differently.
func (t *Tokenizer) GGUFVocab() (GGUFVocab, error) {
	v := GGUFVocab{Source: t.path, Model: "gpt2", BOS: t.bos, EOS: t.eos, Pad: t.pad, Unk: t.unk,
		ChatTemplate: t.chatTempl}
	pre, err := t.matchGGUFPre()
	if err != nil {
		return v, err
	}
	v.Pre = pre.names[0]
	switch pf, sf := t.post.prefix, t.post.suffix; {
	case len(pf) == 0 && len(sf) == 0:
	case len(pf) == 1 && len(sf) == 0 && (t.bos < 0 || pf[0] == t.bos):
		v.AddBOS, v.BOS = true, pf[0]
	default:
		return v, fmt.Errorf("%s: the post-processor adds %v before the text and %v after it; "+
			"GGUF can only say add_bos_token", t.path, pf, sf)
	}
	added := t.addedByID()
	v.Tokens = make([]string, len(t.tokens))
	v.TokenTypes = make([]int32, len(t.tokens))
	for id, b := range t.tokens {
		a, isAdded := added[id]
		text := a.Content
		switch {
		case isAdded && a.Special:
			v.TokenTypes[id] = GGUFTokenControl
		case isAdded:
			v.TokenTypes[id] = GGUFTokenUserDefined
		case b == nil:
			text = fmt.Sprintf("[PAD%d]", id)
			v.TokenTypes[id] = GGUFTokenUnused
		default:
			text = byteLevelEncode(b)
			v.TokenTypes[id] = GGUFTokenNormal
		}
		v.Tokens[id] = text
	}
	v.Merges = make([]string, 0, len(t.merges.pairs))
	for r, pr := range t.merges.pairs {
		if t.pieces.merges[pairKey(pr[0], pr[1])] != int32(r) {
			continue // listed again later, which is the one in force
		}
		v.Merges = append(v.Merges, byteLevelEncode(t.tokens[pr[0]])+" "+byteLevelEncode(t.tokens[pr[1]]))
	}
	return v, nil
}

// addedByID maps the ids of added tokens to their entries.
func (t *Tokenizer) addedByID() map[int]addedTokenJSON {
	m := make(map[int]addedTokenJSON, len(t.added))
	for _, a := range t.added {
		m[a.ID] = a
	}
	return m
}

// matchGGUFPre finds the llama.cpp pre-tokenizer that splits text as t's
// does and sets ignore_merges to no effect on t's ids.
func (t *Tokenizer) matchGGUFPre() (ggufPre, error) {
	ours := canonicalSteps(t.preSteps)
	for _, p := range ggufPres {
		if !slices.Equal(canonicalSteps(p.steps), ours) {
			continue
		}
		if p.ignoreMerges != t.pieces.ignoreMerges {
			if n := t.mergesMatter(); n > 0 {
				return p, fmt.Errorf("%s: ignore_merges is %v, but llama.cpp's %q pre-tokenizer sets it %v, "+
					"which changes the ids of %d tokens written whole", t.path, t.pieces.ignoreMerges, p.names[0], p.ignoreMerges, n)
			}
		}
		return p, nil
	}
	return ggufPre{}, fmt.Errorf("%s: the pre-tokenizer is none of llama.cpp's that this package knows (%s)",
		t.path, ggufPreNames())
}

// mergesMatter counts the vocabulary entries, other than added tokens
// (which are cut out before byte-pair encoding), whose bytes do not merge
// back into them: those ignore_merges decides.
func (t *Tokenizer) mergesMatter() int {
	n := 0
	for tok := range t.pieces.notWhole {
		if _, ok := t.addedIDs[tok]; !ok {
			n++
		}
	}
	return n
}

// canonicalSteps writes pre-tokenizer steps in one form for comparison:
// ByteLevel's own pattern as a Split step, and Llama 3's and Qwen2's
// contractions as llama.cpp writes them.
func canonicalSteps(steps []preStep) []preStep {
	var out []preStep
	for _, st := range steps {
		switch st.kind {
		case "ByteLevel":
			if st.useRegex {
				out = append(out, preStep{kind: "Split", pattern: gpt2Pattern})
			}
			out = append(out, preStep{kind: "ByteLevel"})
		case "Split":
			out = append(out, preStep{kind: "Split", pattern: asciiVariant(st.pattern)})
		default:
			out = append(out, st)
		}
	}
	return out
}
