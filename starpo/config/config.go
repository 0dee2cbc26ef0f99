// Package config is the typed configuration of a StarPO run, the one place
// its settings are defined: RAGEN's defaults (docs/ragen.md#defaults), YAML
// presets in configs/, --set overrides, unknown keys rejected, every value
// validated once on loading, the effective config saved with the run. The
// modes are the math packages' own types (advantage.Estimator, FilterType,
// RewardNorm; loss.KLType, AggMode).
package config

import (
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/ragen-go/ragen/starpo/advantage"
	"github.com/ragen-go/ragen/starpo/loss"
)

// Config is one training run.
type Config struct {
	Name              string    `yaml:"name"`               // experiment name
	Seed              int64     `yaml:"seed"`               // training env seeds start here (RAGEN seed.train)
	ValSeed           int64     `yaml:"val_seed"`           // fixed validation seeds start here (seed.val)
	Steps             int       `yaml:"steps"`              // training steps (total_training_steps)
	ValEvery          int       `yaml:"val_every"`          // validate every N steps (test_freq); 0 = first and last
	SaveEvery         int       `yaml:"save_every"`         // checkpoint every N steps; 0 = only at the end
	KeepCheckpoints   int       `yaml:"keep_checkpoints"`   // checkpoints kept, the newest; 0 = all
	KeepEvery         int       `yaml:"keep_every"`         // also keep steps that are multiples of N; 0 = none
	TrajectoriesEvery int       `yaml:"trajectories_every"` // write the training trajectories every N steps; 0 = never
	DType             string    `yaml:"dtype"`              // auto, fp32, bf16, fp16
	Device            string    `yaml:"device"`             // auto, cpu, cuda, cuda:N
	Train             Envs      `yaml:"train"`              // training environments
	Val               Envs      `yaml:"val"`                // validation environments
	Agent             Agent     `yaml:"agent"`              // turn and action limits
	Rollout           Rollout   `yaml:"rollout"`            // sampling
	Algorithm         Algorithm `yaml:"algorithm"`          // advantages and losses
	Shaping           Shaping   `yaml:"shaping"`            // reasoning/format reward terms beyond RAGEN
	Reasoning         Reasoning `yaml:"reasoning"`          // reasoning-aware reward terms (what the think says)
	Echo              Echo      `yaml:"echo"`               // the Echo-Trap watch's thresholds
	Collapse          Collapse  `yaml:"collapse"`           // the template-collapse (mutual-information) measurement
	Builtin           Builtin   `yaml:"builtin_model"`      // the small model `ragen quickstart` creates
	SFT               SFT       `yaml:"sft"`                // the supervised warm start (ragen sft)
	Actor             Optim     `yaml:"actor"`              // actor optimiser
	Critic            Optim     `yaml:"critic"`             // critic optimiser
	LoRA              LoRA      `yaml:"lora"`               // low-rank adapters (lora.go); rank 0 = full fine-tuning

	// RAGEN-2's rollout filter (filter.go); strategy "" is StarPO-S's, from algorithm.filter_ratio.
	RolloutFilter RolloutFilter `yaml:"rollout_filter"`
	// RAGEN's custom_envs (envs.go): environment tags this config defines or redefines.
	CustomEnvs map[string]CustomEnv `yaml:"custom_envs,omitempty"`
}

// Envs is an environment group layout: n_groups[i] groups of tags[i].
type Envs struct {
	Tags      []string `yaml:"tags"`       // environment tags
	NGroups   []int    `yaml:"n_groups"`   // groups per tag, summing to env_groups
	EnvGroups int      `yaml:"env_groups"` // groups in all
	GroupSize int      `yaml:"group_size"` // members per group (same seed)
}

// Agent holds the per-episode limits.
type Agent struct {
	MaxTurn           int     `yaml:"max_turn"`             // turns per episode
	MaxActionsPerTurn int     `yaml:"max_actions_per_turn"` // actions kept per answer
	EnableThink       bool    `yaml:"enable_think"`         // force <think>…</think>
	FormatPenalty     float64 `yaml:"format_penalty"`       // per offending turn
	MaxContextWindow  int     `yaml:"max_context_window"`   // turns shown, -1 = all (k > 0: turns train apart)
}

// Rollout holds the sampling settings and how many update rounds each
// rollout batch trains.
type Rollout struct {
	Temperature    float64 `yaml:"temperature"`     // training sampling temperature
	TopP           float64 `yaml:"top_p"`           // nucleus mass
	TopK           int     `yaml:"top_k"`           // -1 = off
	ResponseLength int     `yaml:"response_length"` // tokens per turn
	ValTemperature float64 `yaml:"val_temperature"` // validation sampling temperature
	Reuse          int     `yaml:"reuse"`           // update rounds per rollout batch: RAGEN's Online-k (1 = on-policy)
	// StaticCache decodes with fixed shapes over a static KV cache (the
	// same ids and log-probs; slower on the CPU); CUDAGraphs also replays
	// each decode step as a CUDA graph (CUDA only, implies static_cache).
	StaticCache bool `yaml:"static_cache"`
	CUDAGraphs  bool `yaml:"cuda_graphs"`
}

// Builtin is the shape of the small Qwen2-architecture model that the
// built-in pipeline (ragen quickstart, plain `make train`) creates from a
// fixed seed, on a vocabulary reduced to the environments' tokens.
type Builtin struct {
	Hidden        int     `yaml:"hidden"`         // hidden_size
	Layers        int     `yaml:"layers"`         // num_hidden_layers
	Heads         int     `yaml:"heads"`          // num_attention_heads
	KVHeads       int     `yaml:"kv_heads"`       // num_key_value_heads
	Intermediate  int     `yaml:"intermediate"`   // intermediate_size
	Seed          uint64  `yaml:"seed"`           // weight initialisation
	VocabEpisodes int     `yaml:"vocab_episodes"` // expert episodes per tag whose text defines the vocabulary
	RopeTheta     float64 `yaml:"rope_theta"`     // rotary base (Qwen2.5's is 1e6)
}

// SFT holds the supervised stage: demonstrations by the environments'
// solvers on the train environments (one per group, seeds from seed on,
// disjoint from training's and validation's), rendered like rollouts. A
// training row is a demonstration, or under a context window one turn of it.
type SFT struct {
	Episodes   int     `yaml:"episodes"`    // demonstrations
	Epochs     int     `yaml:"epochs"`      // passes over them
	Batch      int     `yaml:"batch"`       // trajectories per optimiser step
	MicroBatch int     `yaml:"micro_batch"` // training rows per forward/backward
	LR         float64 `yaml:"lr"`          // AdamW learning rate (constant)
	Noise      float64 `yaml:"noise"`       // chance that a demonstrated turn's first action is random
	Invalid    float64 `yaml:"invalid"`     // chance that a turn answers the placeholder "[your answer]"
	Seed       int64   `yaml:"seed"`        // first demonstration seed
	Heldout    int     `yaml:"heldout"`     // noise-free demonstrations scored for their decisions; 0 = none
	EvalEvery  int     `yaml:"eval_every"`  // score the held-out decisions every N steps; 0 = only at the end
	Think      string  `yaml:"think"`       // the demonstrations' think: grounded (true claims and the plan) or short (one line)
}

// The styles of a demonstration's think (sft.think).
const (
	ThinkGrounded = "grounded" // true claims about the board, then the plan, where the environment writes them
	ThinkShort    = "short"    // one templated line naming the plan
)

// Shaping holds the reasoning/format reward terms, per answered turn (all
// zero in RAGEN; see rollout.Shaping).
type Shaping struct {
	ThinkBonus        float64 `yaml:"think_bonus"`         // non-empty <think> of bounded length before a valid answer
	EmptyThinkPenalty float64 `yaml:"empty_think_penalty"` // empty <think>
	LongThinkPenalty  float64 `yaml:"long_think_penalty"`  // <think> over think_max_words words
	ThinkMaxWords     int     `yaml:"think_max_words"`     // 0 = unbounded
}

// Reasoning holds the weights of the reasoning-aware reward terms, per
// answered turn (zero in RAGEN; see rollout.Reasoning and
// docs/training.md, "Rewarding the think").
type Reasoning struct {
	Consistency float64 `yaml:"consistency"` // ±w: the think's committed actions equal (differ from) the answer's
	Claims      float64 `yaml:"claims"`      // ±w per true (false) claim about the board, at most 3 a turn
	Plan        float64 `yaml:"plan"`        // w × progress of a legal plan; −w for an illegal one
}

// Echo holds the Echo-Trap watch's thresholds (starpo.EchoWatch,
// docs/training.md, "The Echo-Trap watch").
type Echo struct {
	BaselineSteps     int     `yaml:"baseline_steps"`      // steps (or measurements) that set each signal's reference level
	CollapseFrac      float64 `yaml:"collapse_frac"`       // in-group std or entropy EMA below this share of its reference
	SpikeFactor       float64 `yaml:"spike_factor"`        // grad norm above this multiple of the recent median
	ThinkCollapseFrac float64 `yaml:"think_collapse_frac"` // think-length EMA below this share of its reference
	MICollapseFrac    float64 `yaml:"mi_collapse_frac"`    // mutual-information EMA below this share of its reference
}

// Collapse sets RAGEN-2's template-collapse measurement: the mutual
// information between prompts and thinks, estimated by scoring each sampled
// think under every sampled prompt (starpo/collapse, docs/training.md). Its
// cost is samples² sequence scorings.
type Collapse struct {
	Every   int `yaml:"every"`   // measure on training rollouts every N steps (and at each validation); 0 = never
	Samples int `yaml:"samples"` // (trajectory, turn) pairs sampled per measurement
}

// Algorithm holds the StarPO settings: how a step turns a rollout into
// advantages and losses. The trainer reads them from here (starpo.Trainer
// holds the whole Config); each is named as in the YAML. A training row is
// a trajectory, or under a context window one turn of it.
type Algorithm struct {
	AdvEstimator  advantage.Estimator  `yaml:"adv_estimator"`    // gae (PPO with the critic) or grpo
	Gamma         float64              `yaml:"gamma"`            // GAE discount
	Lambda        float64              `yaml:"lambda"`           // GAE λ
	RewardNorm    advantage.RewardNorm `yaml:"reward_norm"`      // identity, mean, mean_std or asym_clip, per state
	UseTurnScores bool                 `yaml:"use_turn_scores"`  // each turn's own reward; no penalty or normalising
	FilterRatio   float64              `yaml:"filter_ratio"`     // StarPO-S: share of groups kept
	FilterType    advantage.FilterType `yaml:"filter_type"`      // std or std_rev
	FilterPerTag  bool                 `yaml:"filter_per_tag"`   // rank each tag's groups apart (RAGEN: all at once)
	ClipLow       float64              `yaml:"clip_low"`         // ε_low
	ClipHigh      float64              `yaml:"clip_high"`        // ε_high (clip-higher)
	ClipC         float64              `yaml:"clip_c"`           // dual clip
	ValueClip     float64              `yaml:"value_clip"`       // critic value clipping
	EntropyCoef   float64              `yaml:"entropy_coef"`     // entropy bonus
	LossAggMode   loss.AggMode         `yaml:"loss_agg_mode"`    // token-mean or a seq-mean mode (loss.AggMode)
	PPOMiniBatch  int                  `yaml:"ppo_mini_batch"`   // training rows per optimiser step; 0 = all kept
	PPOEpochs     int                  `yaml:"ppo_epochs"`       // passes over the kept trajectories
	MicroBatch    int                  `yaml:"micro_batch"`      // training rows per forward/backward
	LMHeadChunk   int                  `yaml:"lm_head_chunk"`    // positions per lm-head chunk in training
	UseKLLoss     bool                 `yaml:"use_kl_loss"`      // KL to the frozen reference in the actor loss
	KLLossCoef    float64              `yaml:"kl_loss_coef"`     // its coefficient
	KLLossType    loss.KLType          `yaml:"kl_loss_type"`     // kl (k1), abs, mse (k2), low_var_kl (k3)
	UseKLInReward bool                 `yaml:"use_kl_in_reward"` // KL to the reference subtracted from rewards
	KLCoef        float64              `yaml:"kl_coef"`          // its (fixed) coefficient
	KLPenalty     loss.KLType          `yaml:"kl_penalty"`       // its estimator
	Autocast      string               `yaml:"autocast"`         // "" (off) or bf16: bf16 updates (CUDA only)

	// Bi-level GAE (advantage.BiLevelGAE): across turns, then within each turn; gae only.
	BiLevelGAE     bool    `yaml:"bi_level_gae"`     // on or off
	HighLevelGamma float64 `yaml:"high_level_gamma"` // the turn level's discount
}

// Optim holds one AdamW.
type Optim struct {
	LR          float64 `yaml:"lr"`           // learning rate
	WeightDecay float64 `yaml:"weight_decay"` // decoupled weight decay
	GradClip    float64 `yaml:"grad_clip"`    // global gradient-norm clip
	WarmupSteps int     `yaml:"warmup_steps"` // linear warm-up steps; -1 = use warmup_ratio
	WarmupRatio float64 `yaml:"warmup_ratio"` // warm-up as a share of steps (when warmup_steps is -1)
	TrainLayers int     `yaml:"train_layers"` // top decoder layers trained (with the final norm); 0 = all
}

// Default is RAGEN's base configuration (StarPO-S on SimpleSokoban).
func Default() Config {
	return Config{
		Name: "sokoban", Seed: 10000, ValSeed: 123, Steps: 200, ValEvery: 10, KeepCheckpoints: 3, TrajectoriesEvery: 1,
		DType: "auto", Device: "auto",
		Train:   Envs{Tags: []string{"SimpleSokoban"}, NGroups: []int{8}, EnvGroups: 8, GroupSize: 16},
		Val:     Envs{Tags: []string{"SimpleSokoban"}, NGroups: []int{256}, EnvGroups: 256, GroupSize: 1},
		Agent:   Agent{MaxTurn: 5, MaxActionsPerTurn: 5, EnableThink: true, FormatPenalty: -0.1, MaxContextWindow: -1},
		Rollout: Rollout{Temperature: 1, TopP: 1, TopK: -1, ResponseLength: 400, ValTemperature: 0.5, Reuse: 1},
		Algorithm: Algorithm{
			AdvEstimator: advantage.EstimatorGAE, Gamma: 1, Lambda: 1, RewardNorm: advantage.NormIdentity,
			FilterRatio: 0.25, FilterType: advantage.FilterStd, ClipLow: 0.2, ClipHigh: 0.28, ClipC: 3, ValueClip: 0.5,
			EntropyCoef: 0.001, LossAggMode: loss.TokenMean,
			PPOMiniBatch: 32, PPOEpochs: 1, MicroBatch: 1, LMHeadChunk: 1024,
			KLLossCoef: 0, KLLossType: loss.KLK1, KLCoef: 0, KLPenalty: loss.KLK1, HighLevelGamma: 0.95,
		},
		RolloutFilter: defaultRolloutFilter(),
		Builtin: Builtin{
			Hidden: 128, Layers: 4, Heads: 4, KVHeads: 2, Intermediate: 384,
			Seed: 7, VocabEpisodes: 512, RopeTheta: 1e6,
		},
		Echo:     Echo{BaselineSteps: 3, CollapseFrac: 0.1, SpikeFactor: 5, ThinkCollapseFrac: 0.5, MICollapseFrac: 0.25},
		Collapse: Collapse{Every: 10, Samples: 8},
		SFT:      SFT{Episodes: 1024, Epochs: 1, Batch: 16, MicroBatch: 4, LR: 1e-5, Noise: 0, Seed: 1_000_000, Think: ThinkGrounded},
		Actor:    Optim{LR: 1e-6, WeightDecay: 0.01, GradClip: 1, WarmupSteps: -1},
		Critic:   Optim{LR: 1e-5, WeightDecay: 0.01, GradClip: 1, WarmupSteps: -1},
		LoRA:     DefaultLoRA(),
	}
}

// Load reads a preset over the defaults, then applies key=value overrides
// (dotted keys, values in YAML syntax), then validates. Unknown keys, a
// value of the wrong kind (7.9 for an integer) and an empty or null
// override are errors naming the file and line, or the --set argument.
func Load(path string, sets []string) (Config, error) {
	var data []byte
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return Config{}, fmt.Errorf("reading config: %w", err)
		}
	}
	return parse(path, data, sets)
}

// parse is Load of a preset's contents, data, read from path.
func parse(path string, data []byte, sets []string) (Config, error) {
	c := Default()
	if err := decodeFile(data, &c); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	for _, kv := range sets {
		if err := c.set(kv); err != nil {
			return Config{}, err
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, blame(err, sets)
	}
	if err := c.useEnvs(); err != nil {
		return Config{}, blame(err, sets)
	}
	return c, nil
}

// Save writes the effective configuration.
func (c Config) Save(path string) error {
	data, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
