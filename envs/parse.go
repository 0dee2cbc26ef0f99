package envs

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The response formats, as RAGEN's regular expressions (first match, dot
// matches newline, non-greedy groups):
//
//	<think>(.*?)</think>\s*<answer>(.*?)</answer>
//	<answer>(.*?)</answer>
//
// matchThinkAnswer and matchAnswer find the same groups with string
// searches, which is several times faster than Go's regexp here; the tests
// check them against the expressions.

// matchThinkAnswer returns the think and answer groups, or ok false.
func matchThinkAnswer(s string) (think, answer string, ok bool) {
	// Any match can start at the first <think>, since the think group
	// matches anything; so the leftmost match starts there. Its think group
	// ends at the first </think> that is followed by spaces and <answer>
	// with a </answer> somewhere after.
	start := strings.Index(s, "<think>")
	if start < 0 {
		return "", "", false
	}
	from := start + len("<think>")
	for pos := from; ; {
		j := strings.Index(s[pos:], "</think>")
		if j < 0 {
			return "", "", false
		}
		j += pos
		k := skipPySpace(s, j+len("</think>"))
		if strings.HasPrefix(s[k:], "<answer>") {
			k += len("<answer>")
			e := strings.Index(s[k:], "</answer>")
			if e < 0 {
				return "", "", false // no later </think> can find a </answer> either
			}
			return s[from:j], s[k : k+e], true
		}
		pos = j + 1
	}
}

// matchAnswer returns the answer group, or ok false.
func matchAnswer(s string) (answer string, ok bool) {
	start := strings.Index(s, "<answer>")
	if start < 0 {
		return "", false
	}
	k := start + len("<answer>")
	e := strings.Index(s[k:], "</answer>")
	if e < 0 {
		return "", false
	}
	return s[k : k+e], true
}

// skipPySpace returns the index after the run of Python whitespace at i.
func skipPySpace(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isPySpace(r) || (r == utf8.RuneError && size == 1) {
			return i
		}
		i += size
	}
	return i
}

// isPySpace reports the characters Python's str.isspace accepts (and its
// re module's \s matches): ASCII controls \t-\r and \x1c-\x1f, the space,
// U+0085, and Unicode separators (Zs, Zl, Zp). Go's \s is ASCII-only.
func isPySpace(r rune) bool {
	switch {
	case r >= '\t' && r <= '\r', r >= 0x1c && r <= 0x20, r == 0x85:
		return true
	}
	return r > 0x85 && unicode.Is(unicode.Z, r)
}

// specialTokens are removed from the think and answer contents, in this
// order, stripping after each (as RAGEN's loop does).
var specialTokens = []string{"<think>", "</think>", "<answer>", "</answer>", "<|im_start|>", "<|im_end|>"}

// Parsed is a model response turned into environment input.
type Parsed struct {
	// Raw is the response as RAGEN sees it: the generation prefix (<think>
	// or <answer>) followed by the decoded text.
	Raw string
	// Response is the normalised text that goes back into the context and
	// into training: <think>A</think><answer>B</answer> (or <answer>B</answer>)
	// with stripped contents and at most the allowed actions, or Raw itself
	// when the format did not match.
	Response string
	// Actions are the answer's pieces between separators, stripped,
	// empty ones dropped, truncated to the per-turn limit.
	Actions []string
	// Valid are the actions the environment accepts, in order: canonical
	// names for environments with Actions (matched ignoring case), the
	// pieces unchanged for free-text environments.
	Valid []string
	// FormatPenalty is RAGEN's rule: the format did not match, or no action
	// is valid, or some action was dropped as unknown.
	FormatPenalty bool
	// Matched is true when the think/answer format matched; Think is then
	// the stripped reasoning ("" without thinking or when empty).
	Matched bool
	Think   string
}

// ParseResponse parses decoded generated text (special tokens skipped) as
// RAGEN does (docs/ragen.md#parsing). The prompt ended with the generation
// prefix <think> (or <answer> without thinking), so that prefix is put back in
// front before matching. maxActionsPerTurn below 0 counts as 0.
func ParseResponse(text string, enableThink bool, maxActionsPerTurn int, env Env) Parsed {
	prefix := "<answer>"
	if enableThink {
		prefix = "<think>"
	}
	p := Parsed{Raw: prefix + text}
	var think, answer string
	var ok bool
	if enableThink {
		think, answer, ok = matchThinkAnswer(p.Raw)
	} else {
		answer, ok = matchAnswer(p.Raw)
	}
	if !ok {
		p.Response, p.FormatPenalty = p.Raw, true
		return p
	}
	answer, think = removeSpecialTokens(answer), removeSpecialTokens(think)
	p.Matched, p.Think = true, think
	for _, piece := range strings.Split(answer, ActionSep) {
		if a := pyStrip(piece); a != "" {
			p.Actions = append(p.Actions, a)
		}
	}
	if limit := max(maxActionsPerTurn, 0); len(p.Actions) > limit {
		p.Actions = p.Actions[:limit]
		answer = strings.Join(p.Actions, " "+ActionSep+" ")
	}
	if enableThink {
		p.Response = "<think>" + think + "</think><answer>" + answer + "</answer>"
	} else {
		p.Response = "<answer>" + answer + "</answer>"
	}

	names := env.Actions()
	for _, a := range p.Actions {
		if names == nil {
			p.Valid = append(p.Valid, a)
		} else if i := actionIndex(names, a); i >= 0 {
			p.Valid = append(p.Valid, names[i])
		}
	}
	p.FormatPenalty = len(p.Valid) == 0 || len(p.Valid) != len(p.Actions)
	return p
}

// removeSpecialTokens deletes each special token in turn, stripping after
// each, as RAGEN's loop does.
func removeSpecialTokens(s string) string {
	for _, tok := range specialTokens {
		if strings.IndexByte(s, '<') >= 0 { // every token starts with '<'
			s = strings.ReplaceAll(s, tok, "")
		}
		s = pyStrip(s)
	}
	return s
}

// pyStrip is Python's str.strip().
func pyStrip(s string) string { return strings.TrimFunc(s, isPySpace) }
