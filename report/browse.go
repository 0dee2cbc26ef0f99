package report

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// fileData is one trajectory file as the browser shows it: its groups.
type fileData struct {
	Label  string      `json:"label"` // "train step 12"
	Kind   string      `json:"kind"`
	Step   int         `json:"step"`
	Groups []groupData `json:"groups"`
}

// groupData is the members of one group (same seed, same tag).
type groupData struct {
	GroupID int          `json:"group_id"`
	Tag     string       `json:"tag"`
	Seed    int64        `json:"seed"`
	Members []memberData `json:"members"`
}

// memberData is one trajectory split into turns. System and Prompt index
// pageData.Texts (they repeat across members), -1 when absent.
type memberData struct {
	EnvID       int        `json:"env_id"`
	System      int        `json:"system"`
	Prompt      int        `json:"prompt"` // the first user message's instructions before "Turn 1:"
	Turns       []turnData `json:"turns"`
	TurnRewards []float64  `json:"turn_rewards"`
	Penalty     float64    `json:"penalty"`
	Score       float64    `json:"score"`
	Success     bool       `json:"success"`
	NumActions  int        `json:"num_actions"`
}

// turnData is one turn: the state the agent saw and its response.
type turnData struct {
	State     string   `json:"state,omitempty"` // the user message
	Responded bool     `json:"responded"`
	Think     string   `json:"think,omitempty"`
	Answer    string   `json:"answer,omitempty"`
	Actions   []string `json:"actions,omitempty"`
	Raw       string   `json:"raw,omitempty"` // the whole response, kept when it is not <think>…</think><answer>…</answer>
	Reward    *float64 `json:"reward,omitempty"`
}

// texts interns long strings that repeat across members.
type texts struct {
	list  []string
	index map[string]int
}

func (t *texts) add(s string) int {
	if s == "" {
		return -1
	}
	if i, ok := t.index[s]; ok {
		return i
	}
	if t.index == nil {
		t.index = map[string]int{}
	}
	t.index[s] = len(t.list)
	t.list = append(t.list, s)
	return len(t.list) - 1
}

// loadFiles reads the selected trajectory files into the browser's shape.
func loadFiles(files []TrajFile, maxChars int, tx *texts) ([]fileData, error) {
	out := make([]fileData, 0, len(files))
	for _, f := range files {
		ts, err := LoadTrajectories(f.Path)
		if err != nil {
			return nil, err
		}
		out = append(out, fileData{Label: f.Label(), Kind: f.Kind, Step: f.Step, Groups: groups(ts, maxChars, tx)})
	}
	return out, nil
}

// groups gathers trajectories by group id, members in env-id order.
func groups(ts []Trajectory, maxChars int, tx *texts) []groupData {
	byID := map[int]*groupData{}
	var ids []int
	for _, t := range ts {
		g, ok := byID[t.GroupID]
		if !ok {
			g = &groupData{GroupID: t.GroupID, Tag: t.Tag, Seed: t.Seed}
			byID[t.GroupID] = g
			ids = append(ids, t.GroupID)
		}
		g.Members = append(g.Members, member(t, maxChars, tx))
	}
	sort.Ints(ids)
	out := make([]groupData, len(ids))
	for i, id := range ids {
		g := byID[id]
		sort.SliceStable(g.Members, func(a, b int) bool { return g.Members[a].EnvID < g.Members[b].EnvID })
		out[i] = *g
	}
	return out
}

// member splits a trajectory's chat into turns: each user message opens a
// turn, the assistant message after it closes it with the n-th turn reward.
func member(t Trajectory, maxChars int, tx *texts) memberData {
	m := memberData{EnvID: t.EnvID, System: -1, Prompt: -1, TurnRewards: t.TurnRewards, Penalty: t.Penalty,
		Score: t.Score, Success: t.Success, NumActions: t.NumActions}
	responses := 0
	for _, msg := range t.Messages {
		content := truncate(msg.Content, maxChars)
		switch msg.Role {
		case "system":
			m.System = tx.add(content)
		case "assistant":
			if len(m.Turns) == 0 || m.Turns[len(m.Turns)-1].Responded {
				m.Turns = append(m.Turns, turnData{})
			}
			turn := parseResponse(content)
			turn.State = m.Turns[len(m.Turns)-1].State
			if responses < len(t.TurnRewards) {
				turn.Reward = &t.TurnRewards[responses]
			}
			responses++
			m.Turns[len(m.Turns)-1] = turn
		default:
			if len(m.Turns) == 0 && m.Prompt < 0 {
				if i := strings.Index(content, "Turn 1:\n"); i > 0 {
					m.Prompt = tx.add(content[:i])
					content = content[i:]
				}
			}
			m.Turns = append(m.Turns, turnData{State: content})
		}
	}
	return m
}

var (
	thinkRe  = regexp.MustCompile(`(?s)<think>(.*?)</think>`)
	answerRe = regexp.MustCompile(`(?s)<answer>(.*?)</answer>`)
)

// parseResponse splits an assistant message in RAGEN's format
// "<think>…</think><answer>A || B</answer>". A response with no answer, or
// with text outside the two tags, also keeps its raw text.
func parseResponse(s string) turnData {
	t := turnData{Responded: true}
	rest := s
	if m := thinkRe.FindStringSubmatch(s); m != nil {
		t.Think = strings.TrimSpace(m[1])
		rest = strings.Replace(rest, m[0], "", 1)
	}
	m := answerRe.FindStringSubmatch(s)
	if m != nil {
		t.Answer = strings.TrimSpace(m[1])
		rest = strings.Replace(rest, m[0], "", 1)
		for a := range strings.SplitSeq(t.Answer, "||") {
			if a = strings.TrimSpace(a); a != "" {
				t.Actions = append(t.Actions, a)
			}
		}
	}
	if m == nil || strings.TrimSpace(rest) != "" {
		t.Raw = s
	}
	return t
}

// truncate cuts s after max characters with a visible marker; max <= 0
// keeps everything.
func truncate(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	cut, n := 0, 0
	for i := range s {
		if n == max {
			cut = i
			break
		}
		n++
	}
	return s[:cut] + fmt.Sprintf("\n… [truncated: %d more characters]", utf8.RuneCountInString(s[cut:]))
}
