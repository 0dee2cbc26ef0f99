package envs

import (
	"strings"
	"unicode"
)

// Reasoning is what a think says, checked against the state it was written
// in. It lets training and evaluation score the reasoning itself (does the
// agent see the board? does it do what it planned?), not only the answer.
type Reasoning struct {
	Checked bool     // the environment implements Reasoner
	Commits []string // canonical action names the think commits to (its plan), in order; nil = none
	Claims  int      // claims parsed from the think
	// TrueClaims counts the claims true in the current state.
	TrueClaims int
	// PlanChecked: Commits is non-empty and the environment can play it
	// (FrozenLake and Sokoban, while the episode is not over).
	PlanChecked bool
	// PlanLegal: the plan, played on a copy, never makes a move that loses
	// or wastes the episode. FrozenLake: no move lands on a hole on the map
	// without slips (a move into the edge keeps the player and is legal: the
	// optimal slippery policy uses it). Sokoban: no move walks into a wall,
	// pushes a box against a wall or another box (both leave the player where
	// it stands), or pushes a box onto a non-target cell with walls on two
	// orthogonal sides, from which it can never leave. Moves after the goal
	// or the end of the episode are not played.
	PlanLegal bool
	// PlanProgress in [-1, 1] is the share of the distance to the goal the
	// legal plan removes, (d0 - d1) / d0, clamped, where d is FrozenLake's
	// shortest path to the goal around holes without slips, or Sokoban's sum
	// over boxes of the Manhattan distance to the nearest target. It is 1 when
	// the plan reaches the goal (solves the level), and 0 when the plan is not
	// legal or not checked.
	PlanProgress float64
}

// Reasoner is implemented by environments whose thinks can be checked:
// FrozenLake, Sokoban and Bandit. Reason must not change the environment.
type Reasoner interface {
	Reason(think string) Reasoning
}

// ThinkWriter is implemented by environments whose expert can write a
// grounded think: true claims about the current state, then the plan, in
// sentences Reason reads back, so that fine-tuning on expert turns teaches a
// think the checks can read.
type ThinkWriter interface {
	// GroundedThink writes a think in style (taken modulo ThinkStyles) for
	// the plan the expert will answer.
	GroundedThink(plan []string, style int) string
}

// ThinkStyles is the number of phrasings GroundedThink writes.
const ThinkStyles = 3

// Reason checks think against env's current state without changing it;
// Checked is false when env is not a Reasoner.
//
// The plan (Commits) is read by one rule, the same for every environment:
//
//   - The think is cut into sentences at '.', '!', '?' and ';' (a '.'
//     between two digits, as in 0.25, does not cut). Newlines do not cut, so
//     a plan may be laid out over lines.
//   - Words are runs of letters and digits, compared in lower case.
//   - In a sentence, reading starts after the first plan marker: "plan",
//     "answer", "I will", "I'll", "I should", "so I", "let's", "move", "go",
//     "push", "pull", "choose", "pick". It collects the action names, whole
//     words in order, skipping every other word (separators such as ",",
//     "then", "and", "||", "->" and later markers included), and ends at the
//     sentence's end or at a stop word that turns to reasons or
//     alternatives: "because", "since", "as", "but", "so", "while", "if",
//     "unless", "avoid", "avoiding", "instead", "rather", "not", "otherwise".
//   - The plan is what the last sentence that collects at least one action
//     name collects; with none, Commits is nil. Bandit keeps only the first
//     arm named.
//
// So "The box is to my right" commits to nothing, "To avoid the hole, I
// will go left then down." commits to Left, Down, and "I will go right
// because the hole is to my left" to Right alone. Negation is not
// understood: "I will not go left" commits to nothing, "go left, not right"
// to Left.
//
// Claims are read clause by clause: the think is cut at '.', '!', '?', ';',
// ',', ':' and newlines, and at the words "and", "but", "so", "then",
// "while", "because" and "since"; a clause holds at most one claim, and a
// clause with a negation or a hedge ("no", "not", "n't", "never", "if",
// "maybe", ...) holds none. Each environment's grammar is documented with
// its Reason method; text the grammar does not parse scores nothing.
func Reason(env Env, think string) Reasoning {
	r, ok := env.(Reasoner)
	if !ok {
		return Reasoning{}
	}
	return r.Reason(think)
}

// planMarkers start the reading of a plan; each is a sequence of words.
var planMarkers = [][]string{
	{"plan"}, {"answer"}, {"i", "will"}, {"i", "ll"}, {"i", "should"}, {"so", "i"}, {"let", "s"},
	{"move"}, {"go"}, {"push"}, {"pull"}, {"choose"}, {"pick"},
}

// planStops end a plan's reading: what follows gives reasons or alternatives.
var planStops = wordSet("because since as but so while if unless avoid avoiding instead rather not otherwise")

// clauseBreaks cut a sentence into clauses for the claim grammars.
var clauseBreaks = wordSet("and but so then while because since")

// hedges mark a clause that asserts nothing: negated, conditional or unsure.
// "t" is what remains of "n't" ("isn't" reads "isn t").
var hedges = wordSet("no not t never nothing cannot without if whether unless maybe perhaps might could")

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// words returns the lower-case runs of letters and digits of s.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// splitText cuts s at each byte of seps, except a '.' or ',' between two
// digits ("0.25"). Cutting at ASCII bytes never splits a UTF-8 sequence.
func splitText(s, seps string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte(seps, c) < 0 {
			continue
		}
		if (c == '.' || c == ',') && i > 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1]) {
			continue
		}
		out = append(out, s[start:i])
		start = i + 1
	}
	return append(out, s[start:])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// commitments reads the plan of think (the rule in Reason's doc comment),
// returning canonical names from names; limit > 0 keeps at most that many.
func commitments(think string, names []string, limit int) []string {
	nameWords := make([][]string, len(names))
	for i, n := range names {
		nameWords[i] = words(n)
	}
	sentences := splitText(think, ".!?;")
	for i := len(sentences) - 1; i >= 0; i-- {
		if plan := readPlan(words(sentences[i]), names, nameWords, limit); plan != nil {
			return plan
		}
	}
	return nil
}

// readPlan collects the names after the first marker of one sentence.
func readPlan(ws, names []string, nameWords [][]string, limit int) []string {
	var plan []string
	for i := afterMarker(ws); i >= 0 && i < len(ws); {
		if k, n := matchName(ws[i:], nameWords); k >= 0 {
			plan = append(plan, names[k])
			if len(plan) == limit {
				break
			}
			i += n
			continue
		}
		if planStops[ws[i]] {
			break
		}
		i++
	}
	return plan
}

// afterMarker returns the index after the first plan marker in ws, or -1.
func afterMarker(ws []string) int {
	for i := range ws {
		for _, m := range planMarkers {
			if hasPrefixWords(ws[i:], m) {
				return i + len(m)
			}
		}
	}
	return -1
}

// matchName returns the index of the longest name whose words start ws, and
// its length in words, or -1. Names without words never match.
func matchName(ws []string, nameWords [][]string) (k, n int) {
	k = -1
	for i, nw := range nameWords {
		if len(nw) > n && hasPrefixWords(ws, nw) {
			k, n = i, len(nw)
		}
	}
	return k, n
}

func hasPrefixWords(ws, prefix []string) bool {
	if len(prefix) > len(ws) {
		return false
	}
	for i, p := range prefix {
		if ws[i] != p {
			return false
		}
	}
	return true
}

// claimClauses cuts think into the clauses the claim grammars read, as word
// lists, dropping clauses with a hedge.
func claimClauses(think string) [][]string {
	var out [][]string
	for _, part := range splitText(think, ".!?;,:\n") {
		ws := words(part)
		start := 0
		for i := 0; i <= len(ws); i++ {
			if i < len(ws) && !clauseBreaks[ws[i]] {
				continue
			}
			if c := ws[start:i]; len(c) > 0 && !hasHedge(c) {
				out = append(out, c)
			}
			start = i + 1
		}
	}
	return out
}

func hasHedge(ws []string) bool {
	for _, w := range ws {
		if hedges[w] {
			return true
		}
	}
	return false
}

// planSentence states the plan after a marker, one phrasing per style, for
// GroundedThink. It is empty for an empty plan.
func planSentence(plan []string, style int) string {
	if len(plan) == 0 {
		return ""
	}
	switch styleIndex(style) {
	case 0:
		return "So I will go " + strings.Join(plan, ", then ") + "."
	case 1:
		return "Plan: " + strings.Join(plan, " "+ActionSep+" ") + "."
	default:
		return "I'll move " + strings.Join(plan, " and ") + "."
	}
}

// styleIndex takes style modulo ThinkStyles, negative styles included.
func styleIndex(style int) int { return (style%ThinkStyles + ThinkStyles) % ThinkStyles }

// joinSentences joins the non-empty sentences with spaces.
func joinSentences(ss ...string) string {
	var kept []string
	for _, s := range ss {
		if s != "" {
			kept = append(kept, s)
		}
	}
	return strings.Join(kept, " ")
}

// capitalize upper-cases the first byte of an ASCII-initial sentence.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// progressRatio is (d0 - d1) / d0 clamped to [-1, 1]: 0 when d0 is not
// positive (nothing to gain or no way there), -1 when d1 is unreachable.
func progressRatio(d0, d1 int) float64 {
	switch {
	case d0 <= 0:
		return 0
	case d1 < 0:
		return -1
	}
	return max(-1, min(1, float64(d0-d1)/float64(d0)))
}
