package collapse

import (
	"fmt"
	"math"
)

// Metric names: RAGEN's, and NumEmptyDropped, which Measure adds.
const (
	MIEstimate            = "collapse/mi_estimate"
	MISeqEstimate         = "collapse/mi_seq_estimate"
	MIUpperBound          = "collapse/mi_upper_bound"
	ConditionalEntropy    = "collapse/conditional_entropy_est"
	ConditionalEntropySeq = "collapse/conditional_entropy_seq_est"
	ReasoningEntropy      = "collapse/reasoning_entropy_est"
	ReasoningEntropySeq   = "collapse/reasoning_entropy_seq_est"
	RetrievalAccuracy     = "collapse/retrieval_accuracy"
	RetrievalChanceLevel  = "collapse/retrieval_chance_level"
	RetrievalAboveChance  = "collapse/retrieval_above_chance"
	NumSamples            = "collapse/num_samples"
	NumPrompts            = "collapse/num_prompts"
	NumEmptyDropped       = "collapse/num_empty_dropped"
)

// Stats computes the collapse metrics (package doc) from the cross
// log-prob matrix seq [M][N] (seq[i][j] = log p(z_i | x_j), summed over
// z_i's tokens), the reasoning lengths tokens [M] (each ≥ 1) and the own
// column col [M] of each sample. N is the rows' length (0 without rows);
// with N < 2 only the counts are returned. Inconsistent shapes are
// programmer errors and panic.
func Stats(seq [][]float64, tokens []int, col []int) map[string]float64 {
	M, N := len(seq), 0
	if M > 0 {
		N = len(seq[0])
	}
	checkShapes(seq, tokens, col, N)
	out := map[string]float64{NumSamples: float64(M), NumPrompts: float64(N)}
	if N < 2 {
		return out
	}
	var mi, miSeq, cond, condSeq, marg, margSeq, hits float64
	perTok := make([]float64, N)
	for i, row := range seq {
		n := float64(tokens[i])
		for j, v := range row {
			perTok[j] = v / n
		}
		m, mTok := logMeanExp(row), logMeanExp(perTok)
		c, cTok := row[col[i]], perTok[col[i]]
		miSeq += c - m
		mi += cTok - mTok
		condSeq -= c
		cond -= cTok
		margSeq -= m
		marg -= mTok
		hits += retrieved(row, col[i])
	}
	fm := float64(M)
	out[MIEstimate], out[MISeqEstimate] = mi/fm, miSeq/fm
	out[MIUpperBound] = math.Log(float64(N))
	out[ConditionalEntropy], out[ConditionalEntropySeq] = cond/fm, condSeq/fm
	out[ReasoningEntropy], out[ReasoningEntropySeq] = marg/fm, margSeq/fm
	out[RetrievalAccuracy], out[RetrievalChanceLevel] = hits/fm, 1/float64(N)
	out[RetrievalAboveChance] = out[RetrievalAccuracy] - out[RetrievalChanceLevel]
	return out
}

func checkShapes(seq [][]float64, tokens, col []int, N int) {
	if len(tokens) != len(seq) || len(col) != len(seq) {
		panic(fmt.Sprintf("collapse.Stats: %d rows, %d token counts, %d columns", len(seq), len(tokens), len(col)))
	}
	for i, row := range seq {
		switch {
		case len(row) != N:
			panic(fmt.Sprintf("collapse.Stats: row %d has %d columns, row 0 has %d", i, len(row), N))
		case col[i] < 0 || col[i] >= N:
			panic(fmt.Sprintf("collapse.Stats: sample %d's column %d is outside [0, %d)", i, col[i], N))
		case tokens[i] < 1:
			panic(fmt.Sprintf("collapse.Stats: sample %d has %d reasoning tokens", i, tokens[i]))
		}
	}
}

// logMeanExp is log((1/N) Σ_j exp v_j) = logsumexp(v) − log N, computed as
// max + log(mean exp(v − max)): equal entries give back that entry exactly,
// so a collapsed matrix has an mi of exactly 0.
func logMeanExp(v []float64) float64 {
	hi := math.Inf(-1)
	for _, x := range v {
		hi = max(hi, x)
	}
	if math.IsInf(hi, 0) {
		return hi
	}
	s := 0.0
	for _, x := range v {
		s += math.Exp(x - hi)
	}
	return hi + math.Log(s/float64(len(v)))
}

// retrieved is sample i's retrieval credit: 1/k when its own column is
// among the k columns of the largest log-prob, else 0.
func retrieved(row []float64, own int) float64 {
	hi := math.Inf(-1)
	for _, x := range row {
		hi = max(hi, x)
	}
	if row[own] != hi {
		return 0
	}
	k := 0
	for _, x := range row {
		if x == hi {
			k++
		}
	}
	return 1 / float64(k)
}
