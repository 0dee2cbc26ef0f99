package tokenizer

import (
	"container/heap"
	"fmt"
	"math"
	"slices"

	tiktoken "github.com/pkoukk/tiktoken-go"
)

// pieceEncoder byte-pair encodes one pre-tokenized piece, the way
// HuggingFace's BPE model does: starting from the piece's bytes, the
// adjacent pair that comes earliest in the merge list is joined, leftmost
// first among equals, until no pair of the list is left. With ignore_merges
// a piece that is a whole vocabulary token is that token, without merging.
//
// Without ignore_merges, taking a whole token as itself is still right for
// every token whose bytes merge back into it, which Load works out once
// (notWhole lists the others): in vocabularies converted from tiktoken
// ranks, such as Qwen's, that is every token, and the lookup saves the
// merge loop on most pieces.
//
// The merge loops work on ids, with an integer-keyed table. For Qwen's
// vocabulary a second, independent loop serves as the tests' reference:
// tiktoken-go's, where ranks are the vocabulary ids and the adjacent pair
// whose concatenation has the lowest rank is joined. The two agree when the
// merge list is in increasing id order and makes every multi-byte token
// (mergeList.rankIsID); whole is nil otherwise.
type pieceEncoder struct {
	ranks   map[string]int   // byte string -> id
	byteIDs [256]int32       // the id of each single byte
	merges  map[uint64]int32 // pairKey(left, right) -> the merge's rank
	// mergeIDs[rank] is the id of the token the merge of that rank makes.
	mergeIDs []int32
	// byteMerges[a<<8|b] is merges' entry for the bytes a and b, noMerge if
	// none: the first round of every merge, from a 256 KB table instead of
	// the map.
	byteMerges   []int32
	ignoreMerges bool
	// missingBytes: some byte has no token (byteIDs -1); byteBarrier
	// selects llama.cpp's handling of those bytes over HuggingFace's (see
	// startParts).
	missingBytes, byteBarrier bool
	// notWhole holds the multi-byte vocabulary entries whose bytes do not
	// merge back into them.
	notWhole map[string]bool
	// whole is tiktoken-go's encoder with a pattern that matches a whole
	// piece, so that EncodeOrdinary goes straight to its merge loop.
	whole *tiktoken.Tiktoken
}

// wholePiece matches any non-empty string in full ((?s: lets . match \n).
const wholePiece = `(?s:.+)`

func pairKey(left, right int32) uint64 { return uint64(left)<<32 | uint64(uint32(right)) }

// mergeList is a merge list resolved to ids: merge r joins pairs[r] into
// ids[r]. rankIsID reports that the ids strictly increase along the list
// and that every multi-byte token is made by a merge.
type mergeList struct {
	pairs    [][2]int32
	ids      []int32
	rankIsID bool
}

// newPieceEncoder returns the encoder for a vocabulary and merge list;
// byteBarrier selects llama.cpp's handling of bytes without a token.
func newPieceEncoder(ranks map[string]int, ml mergeList, ignoreMerges, byteBarrier bool) (*pieceEncoder, error) {
	p := &pieceEncoder{ranks: ranks, mergeIDs: ml.ids, ignoreMerges: ignoreMerges, byteBarrier: byteBarrier}
	p.merges = make(map[uint64]int32, len(ml.pairs))
	for r, pr := range ml.pairs {
		// A pair listed twice keeps its last rank, as HuggingFace's
		// merge map (a HashMap filled in list order) does.
		p.merges[pairKey(pr[0], pr[1])] = int32(r)
	}
	for b := range p.byteIDs {
		id, ok := ranks[string([]byte{byte(b)})]
		if !ok {
			id = -1
			p.missingBytes = true
		}
		p.byteIDs[b] = int32(id)
	}
	p.byteMerges = make([]int32, 1<<16)
	for a := range 256 {
		for b := range 256 {
			p.byteMerges[a<<8|b] = p.mergeOf(p.byteIDs[a], p.byteIDs[b])
		}
	}
	// tiktoken-go's constructor indexes and sorts the whole vocabulary, and
	// findNotWhole merges every token: run them side by side.
	done := make(chan struct{})
	go func() {
		p.notWhole = p.findNotWhole()
		close(done)
	}()
	var err error
	if ml.rankIsID {
		var core *tiktoken.CoreBPE
		if core, err = tiktoken.NewCoreBPE(ranks, map[string]int{}, wholePiece); err == nil {
			p.whole = tiktoken.NewTiktoken(core, nil, nil)
		}
	}
	<-done
	if err != nil {
		return nil, fmt.Errorf("tiktoken: %w", err)
	}
	return p, nil
}

// findNotWhole returns the multi-byte vocabulary entries that merging their
// bytes does not rebuild, nil when there are none.
func (p *pieceEncoder) findNotWhole() map[string]bool {
	var out map[string]bool
	var buf []int
	for tok, id := range p.ranks {
		if len(tok) < 2 {
			continue
		}
		buf = p.mergeAny(buf[:0], tok)
		if len(buf) != 1 || buf[0] != id {
			if out == nil {
				out = map[string]bool{}
			}
			out[tok] = true
		}
	}
	return out
}

// encodeTiktoken appends the ids of piece to dst, merging with tiktoken-go
// when it reproduces the merge list, and with encode otherwise.
func (p *pieceEncoder) encodeTiktoken(dst []int, piece string) []int {
	if p.whole == nil {
		return p.encode(dst, piece)
	}
	// tiktoken-go looks the whole piece up first too; doing it here saves
	// its regexp2 match for the common case.
	if id, ok := p.ranks[piece]; ok {
		return append(dst, id)
	}
	return append(dst, p.whole.EncodeOrdinary(piece)...)
}

// encode appends the ids of piece to dst, merging by the merge list.
func (p *pieceEncoder) encode(dst []int, piece string) []int {
	if id, ok := p.ranks[piece]; ok && (p.ignoreMerges || !p.notWhole[piece]) {
		return append(dst, id)
	}
	return p.mergeAny(dst, piece)
}

// mergeAny merges piece with merge or, for long pieces, mergeLong.
func (p *pieceEncoder) mergeAny(dst []int, piece string) []int {
	if len(piece) > longPiece {
		return p.mergeLong(dst, piece)
	}
	return p.merge(dst, piece)
}

// longPiece is the length above which merge's quadratic scan gives way to
// mergeLong's heap (runs of spaces or of CJK text can be long).
const longPiece = 64

const noMerge = math.MaxInt32

// mergeOf returns the rank of the merge that joins left and right, or
// noMerge; the lower the rank, the earlier the merge.
func (p *pieceEncoder) mergeOf(left, right int32) int32 {
	if id, ok := p.merges[pairKey(left, right)]; ok {
		return id
	}
	return noMerge
}

// merge starts from the piece's bytes and joins the adjacent pair with the
// earliest merge, leftmost among equals, until no pair has a merge. ids[i]
// is part i and next[i] the rank of the merge of parts i and i+1.
func (p *pieceEncoder) merge(dst []int, piece string) []int {
	var idsBuf, nextBuf [longPiece]int32
	n := len(piece)
	ids, next := idsBuf[:n], nextBuf[:n]
	for i := 0; i < n; i++ {
		ids[i] = p.byteIDs[piece[i]]
	}
	if p.missingBytes && slices.Min(ids) < 0 {
		return p.mergeParts(dst, p.startParts(piece))
	}
	for i := 0; i < n-1; i++ {
		next[i] = p.byteMerges[int(piece[i])<<8|int(piece[i+1])]
	}
	next[n-1] = noMerge
	for n > 1 {
		best, at := int32(noMerge), -1
		for i, m := range next[:n-1] {
			if m < best {
				best, at = m, i
			}
		}
		if at < 0 {
			break
		}
		ids[at] = p.mergeIDs[best]
		copy(ids[at+1:n-1], ids[at+2:n])
		copy(next[at+1:n-1], next[at+2:n])
		n--
		next[n-1] = noMerge
		if at+1 < n {
			next[at] = p.mergeOf(ids[at], ids[at+1])
		}
		if at > 0 {
			next[at-1] = p.mergeOf(ids[at-1], ids[at])
		}
	}
	for _, id := range ids[:n] {
		dst = append(dst, int(id))
	}
	return dst
}

// mergeLong gives merge's result in O(n log n).
func (p *pieceEncoder) mergeLong(dst []int, piece string) []int {
	return p.mergeParts(dst, p.startParts(piece))
}

// startParts returns the ids of piece's bytes to merge. A byte the
// vocabulary has no token for (SmolLM2 lacks 21, such as 0x04 and 0xC0) is
// left out, as HuggingFace's BPE leaves out a character it cannot look up
// when there is no unk_token, so that its neighbours may merge; with
// byteBarrier it stays as -1, which merges with nothing and is dropped at
// the end, as in llama.cpp.
func (p *pieceEncoder) startParts(piece string) []int32 {
	ids := make([]int32, 0, len(piece))
	for i := 0; i < len(piece); i++ {
		if id := p.byteIDs[piece[i]]; id >= 0 || p.byteBarrier {
			ids = append(ids, id)
		}
	}
	return ids
}

// mergeParts merges ids as merge does: the parts form a linked list and
// candidate joins wait in a heap ordered by merge, then position. A popped
// candidate is dropped if either of its parts has changed since.
func (p *pieceEncoder) mergeParts(dst []int, ids []int32) []int {
	n := len(ids)
	if n == 0 {
		return dst
	}
	type part struct {
		id         int32
		prev, next int // neighbours, -1 at the ends
		version    int // bumped when the part changes or is absorbed
	}
	parts := make([]part, n)
	for i := range parts {
		parts[i] = part{id: ids[i], prev: i - 1, next: i + 1}
	}
	parts[n-1].next = -1
	h := &joinHeap{}
	push := func(i int) {
		j := parts[i].next
		if j < 0 {
			return
		}
		if m := p.mergeOf(parts[i].id, parts[j].id); m != noMerge {
			heap.Push(h, join{rank: m, left: i, lv: parts[i].version, rv: parts[j].version})
		}
	}
	for i := 0; i < n-1; i++ {
		push(i)
	}
	for h.Len() > 0 {
		c := heap.Pop(h).(join)
		l := &parts[c.left]
		if l.version != c.lv || l.next < 0 {
			continue
		}
		r := &parts[l.next]
		if r.version != c.rv {
			continue
		}
		// Absorb the right part into the left one.
		l.id = p.mergeIDs[c.rank]
		l.next = r.next
		l.version++
		r.version++ // absorbed: any candidate naming it is stale
		if l.next >= 0 {
			parts[l.next].prev = c.left
		}
		push(c.left)
		if l.prev >= 0 {
			push(l.prev) // its old candidate is stale: l.version moved
		}
	}
	for i := 0; i >= 0; i = parts[i].next {
		if parts[i].id >= 0 {
			dst = append(dst, int(parts[i].id))
		}
	}
	return dst
}

// join is a candidate merge, of that rank, of part left with its right
// neighbour; lv and rv are the parts' versions when it was found.
type join struct {
	rank   int32
	left   int
	lv, rv int
}

// joinHeap orders candidates as merge's scan picks them: earliest merge,
// then leftmost (part indices keep the text's order).
type joinHeap []join

func (h joinHeap) Len() int { return len(h) }
func (h joinHeap) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].left < h[j].left
}
func (h joinHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *joinHeap) Push(x any)   { *h = append(*h, x.(join)) }
func (h *joinHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
