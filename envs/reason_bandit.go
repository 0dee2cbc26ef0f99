package envs

import (
	"regexp"
	"strings"
)

// banditVerdict reads what a clause says of an arm, from the words after
// the arm's name: "ARM is (the) better (arm)", "ARM seems worse", "ARM pays
// more", "ARM gives less", "ARM has the higher expected reward", "ARM has a
// lower average payout". "arm" may follow the name; "looks", "seems" may
// replace "is"; "gives", "yields", "earns", "returns", "offers" replace
// "pays"; "average", "mean" replace "expected" (or it is left out); and
// "payout", "return", "value", "payoff" replace "reward".
var banditVerdict = regexp.MustCompile(`^(?:arm )?(?:` +
	`(?:is|looks|seems)(?: likely| probably)?(?: to be)? (?:the |a )?(?P<v>better|worse)` +
	`|(?:pays|gives|yields|earns|returns|offers)(?: out)? (?P<v>more|less)` +
	`|has (?:the |a )?(?P<v>higher|lower|better|worse)(?: (?:expected|average|mean))? (?:reward|payout|return|value|payoff)s?` +
	`)(?: |$)`)

// banditClaim says arm k is better (sign 1) or worse (-1) than the other.
type banditClaim struct{ arm, sign int }

// Reason checks a think against the arms' payout distributions. A claim
// (banditVerdict after an arm's name, anywhere in a clause) is true iff that
// arm's expected payout is strictly higher (better, more, higher) or lower
// (worse, less, lower) than the other's; the payouts of single pulls do not
// matter. The plan is the first arm named after a marker ("so I choose
// Dragon", "pull phoenix"); a bandit has no moves to play, so PlanChecked
// stays false.
func (b *Bandit) Reason(think string) Reasoning {
	r := Reasoning{Checked: true, Commits: commitments(think, b.arms, 1)}
	for _, c := range b.claims(think) {
		r.Claims++
		if b.compare(c.arm) == c.sign {
			r.TrueClaims++
		}
	}
	return r
}

// claims parses the think's clauses, at most one claim each.
func (b *Bandit) claims(think string) []banditClaim {
	nameWords := [][]string{words(b.arms[0]), words(b.arms[1])}
	var out []banditClaim
	for _, ws := range claimClauses(think) {
		if c, ok := banditClaimIn(ws, nameWords); ok {
			out = append(out, c)
		}
	}
	return out
}

// banditClaimIn finds the first arm name in the clause that banditVerdict
// follows.
func banditClaimIn(ws []string, nameWords [][]string) (banditClaim, bool) {
	for i := range ws {
		k, n := matchName(ws[i:], nameWords)
		if k < 0 {
			continue
		}
		m := banditVerdict.FindStringSubmatch(strings.Join(ws[i+n:], " "))
		if m == nil {
			continue
		}
		for j, name := range banditVerdict.SubexpNames() {
			if name != "v" || m[j] == "" {
				continue
			}
			sign := 1
			if m[j] == "worse" || m[j] == "less" || m[j] == "lower" {
				sign = -1
			}
			return banditClaim{arm: k, sign: sign}, true
		}
	}
	return banditClaim{}, false
}

// compare is 1 when arm k (in Actions order) has the higher expected
// payout, -1 when the lower, 0 when they are equal.
func (b *Bandit) compare(k int) int {
	c := b.cfg
	hi := c.HiArmHiScoreProb*c.HiArmHiScore + (1-c.HiArmHiScoreProb)*c.HiArmLoScore
	diff := hi - c.LoArmScore
	if b.arms[k] != c.HiArmName {
		diff = -diff
	}
	switch {
	case diff > 0:
		return 1
	case diff < 0:
		return -1
	}
	return 0
}

// GroundedThink says how the planned arm (the better arm for an empty plan)
// compares with the other, then chooses it. With equal expected payouts no
// claim is true, so it writes none.
func (b *Bandit) GroundedThink(plan []string, style int) string {
	style = styleIndex(style)
	arm := ""
	if len(plan) > 0 {
		arm = plan[0]
	} else if best, _ := b.Solve(); len(best) > 0 {
		arm = best[0]
	}
	claim := ""
	if k := actionIndex(b.arms, arm); k >= 0 && b.compare(k) != 0 {
		claim = banditPhrases[b.compare(k) > 0][style]
	}
	name := capitalize(arm)
	switch {
	case claim == "" && len(plan) == 0:
		return ""
	case claim == "":
		return "I choose " + arm + "."
	case len(plan) == 0:
		return name + " " + claim + "."
	case style == 0:
		return name + " " + claim + ", so I choose " + arm + "."
	case style == 1:
		return name + " " + claim + ". I will pull " + arm + "."
	}
	return name + " " + claim + "; I pick " + arm + "."
}

// banditPhrases are the verdicts GroundedThink writes per style, for the
// better (true) and the worse arm.
var banditPhrases = map[bool][ThinkStyles]string{
	true:  {"pays more on average", "has the higher expected reward", "is the better arm"},
	false: {"pays less on average", "has the lower expected reward", "is the worse arm"},
}
