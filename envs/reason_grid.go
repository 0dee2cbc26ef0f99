package envs

import (
	"regexp"
	"strings"
)

// The claim grammar shared by the grid environments (FrozenLake, Sokoban).
// Claims are about cells relative to the player, in the rendered grid's
// frame: up is the previous row, left the previous column. A clause (words
// in lower case joined by single spaces, see claimClauses) is tried against
// these forms in order; the first that matches gives its one claim:
//
//	there is OBJ DIR              "there is a hole to my left"        the adjacent cell
//	the cell DIR is OBJ           "the cell below me is a hole"       the adjacent cell
//	OBJ is directly DIR           "the box is right above me"         the adjacent cell
//	DIR is OBJ                    "below me is a wall"                the adjacent cell
//	OBJ is DIR                    "the goal is to my right"           anywhere that way
//
// DIR is left or right ("to my left", "on the right", "left of me"), above
// ("above me", "over me", "up") or below ("below me", "beneath me", "under
// me", "down"). OBJ is an optional article (a, an, the, some), an optional
// adjective, an environment's noun, and an optional "cell", "square",
// "tile", "space" or "spot". "directly" may also be "just", "immediately",
// "right", "next to me", "adjacent (to me)"; "is" may be "are", "lies",
// "sits" (and "has", "contains" after "the cell DIR"). An adjacent claim is
// true iff the neighbouring cell that way holds OBJ; an "anywhere that way"
// claim (only for the objects an environment lists as such) is true iff some
// such object lies strictly that way: in a smaller row for above, a larger
// column for right, whatever the other coordinate.

// gridStep is a direction on the grid, in rows and columns.
type gridStep struct{ dr, dc int }

// gridDirections maps the direction words of claims and the grid action
// names (lower case) to steps.
var gridDirections = map[string]gridStep{
	"left": {0, -1}, "right": {0, 1},
	"above": {-1, 0}, "over": {-1, 0}, "up": {-1, 0},
	"below": {1, 0}, "beneath": {1, 0}, "under": {1, 0}, "underneath": {1, 0}, "down": {1, 0},
}

// gridClaim is one parsed claim: the object (the noun as written), the
// direction, and whether it is about the adjacent cell or anywhere that way.
type gridClaim struct {
	noun     string
	dir      gridStep
	adjacent bool
}

// gridForm is one sentence form of the grammar.
type gridForm struct {
	re       *regexp.Regexp
	adjacent bool
}

// gridGrammar is the grammar instantiated with one environment's nouns.
type gridGrammar []gridForm

const (
	gridArticle   = `(?:(?:a|an|the|some) )?`
	gridIntensify = `(?:(?:directly|just|immediately|right) )?`
	gridNear      = `(?:directly|just|immediately|right|next to me|adjacent to me|adjacent) `
	gridDir       = `(?:(?:to|on|at) )?(?:(?:my|the) )?(?P<dir>left|right|above|over|below|beneath|under|underneath|up|down)(?: (?:of|from) me| me| side)?`
	gridStart     = `(?:^| )`
	gridEnd       = `(?: |$)`
)

// newGridGrammar compiles the forms for the nouns and adjectives given as
// regexp alternations ("hole|holes|goal").
func newGridGrammar(nouns, adjectives string) gridGrammar {
	obj := gridArticle + `(?:(?:` + adjectives + `) )?(?P<obj>` + nouns + `)(?: (?:cell|square|tile|space|spot)s?)?`
	form := func(adjacent bool, pattern string) gridForm {
		return gridForm{regexp.MustCompile(gridStart + pattern + gridEnd), adjacent}
	}
	return gridGrammar{
		form(true, `there (?:is|are) `+obj+` `+gridIntensify+gridDir),
		form(true, `(?:cell|square|tile|space|spot) `+gridIntensify+gridDir+` (?:is|has|contains) `+obj),
		form(true, obj+` (?:is|are|lies|sits) `+gridNear+gridDir),
		form(true, gridIntensify+gridDir+` (?:is|are) `+obj),
		form(false, obj+` (?:is|are|lies|lie|sits) `+gridDir),
	}
}

// claims parses the think's clauses, at most one claim each.
func (g gridGrammar) claims(think string) []gridClaim {
	var out []gridClaim
	for _, ws := range claimClauses(think) {
		if c, ok := g.claim(strings.Join(ws, " ")); ok {
			out = append(out, c)
		}
	}
	return out
}

func (g gridGrammar) claim(clause string) (gridClaim, bool) {
	for _, f := range g {
		if m := f.re.FindStringSubmatch(clause); m != nil {
			return gridClaim{
				noun:     m[f.re.SubexpIndex("obj")],
				dir:      gridDirections[m[f.re.SubexpIndex("dir")]],
				adjacent: f.adjacent,
			}, true
		}
	}
	return gridClaim{}, false
}

// countClaims returns how many claims truth accepts as claims (ok) and how
// many of those it finds true.
func countClaims(cs []gridClaim, truth func(gridClaim) (isTrue, ok bool)) (claims, trueClaims int) {
	for _, c := range cs {
		if t, ok := truth(c); ok {
			claims++
			if t {
				trueClaims++
			}
		}
	}
	return claims, trueClaims
}

// lies reports whether cell (r, c) lies strictly in direction d from (pr, pc).
func (d gridStep) lies(pr, pc, r, c int) bool {
	return (r-pr)*d.dr > 0 || (c-pc)*d.dc > 0
}

// gridPhrase is how GroundedThink names a direction: "to my left", "above me".
func gridPhrase(d gridStep) string {
	switch d {
	case gridStep{0, -1}:
		return "to my left"
	case gridStep{0, 1}:
		return "to my right"
	case gridStep{-1, 0}:
		return "above me"
	}
	return "below me"
}

// planStep is the direction of the plan's first action, or below for an
// empty plan or an unknown name.
func planStep(plan []string) gridStep {
	if len(plan) > 0 {
		if d, ok := gridDirections[strings.ToLower(plan[0])]; ok {
			return d
		}
	}
	return gridStep{1, 0}
}

// groundedGridThink writes a grid think: an adjacent claim (what is in the
// cell dir, named by obj: "a hole"), an optional claim about where something
// lies ("the goal is below me"), then the plan, in one of ThinkStyles
// phrasings.
func groundedGridThink(dir gridStep, obj, toward string, plan []string, style int) string {
	style = styleIndex(style)
	where := gridPhrase(dir)
	var claims string
	switch style {
	case 0:
		claims = where + " is " + obj + "."
		if toward != "" {
			claims = toward + ", and " + claims
		}
	case 1:
		claims = "there is " + obj + " " + where + "."
		if toward != "" {
			claims += " " + capitalize(toward) + "."
		}
	default:
		claims = "the cell " + where + " is " + obj
		if toward != "" {
			claims += "; " + toward
		}
		claims += "."
	}
	return joinSentences(capitalize(claims), planSentence(plan, style))
}
