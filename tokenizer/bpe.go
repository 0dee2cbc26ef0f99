package tokenizer

import (
	"container/heap"
	"fmt"
	"math"

	tiktoken "github.com/pkoukk/tiktoken-go"
)

// pieceEncoder byte-pair encodes one pre-tokenized piece.
//
// It has two merge loops that must agree. The reference is tiktoken-go's:
// ranks are the vocabulary ids, and the adjacent pair whose concatenation
// has the lowest rank is joined, again and again, leftmost first among
// equals. Encode uses the other, HuggingFace's: only the pairs of the merge
// list are joined, the earliest merge first. Load checks that the merge list
// is in id order and makes every multi-byte token, and the tests compare the
// two loops on a large corpus; the second works on ids with an integer-keyed
// table and skips the regexp2 match that tiktoken-go's EncodeOrdinary makes
// on every piece, which makes it several times faster.
type pieceEncoder struct {
	ranks   map[string]int   // byte string -> id
	byteIDs [256]int32       // the id of each single byte
	merges  map[uint64]int32 // pairKey(left, right) -> id of the merged token
	// byteMerges[a<<8|b] is merges' entry for the bytes a and b, noMerge if
	// none: the first round of every merge, from a 256 KB table instead of
	// the map.
	byteMerges []int32
	// whole is tiktoken-go's encoder with a pattern that matches a whole
	// piece, so that EncodeOrdinary goes straight to its merge loop.
	whole *tiktoken.Tiktoken
}

// wholePiece matches any non-empty string in full ((?s: lets . match \n).
const wholePiece = `(?s:.+)`

func pairKey(left, right int32) uint64 { return uint64(left)<<32 | uint64(uint32(right)) }

func newPieceEncoder(ranks map[string]int, merges map[uint64]int32) (*pieceEncoder, error) {
	core, err := tiktoken.NewCoreBPE(ranks, map[string]int{}, wholePiece)
	if err != nil {
		return nil, fmt.Errorf("tiktoken: %w", err)
	}
	p := &pieceEncoder{ranks: ranks, merges: merges, whole: tiktoken.NewTiktoken(core, nil, nil)}
	for b := range p.byteIDs {
		p.byteIDs[b] = int32(ranks[string([]byte{byte(b)})])
	}
	p.byteMerges = make([]int32, 1<<16)
	for a := range 256 {
		for b := range 256 {
			p.byteMerges[a<<8|b] = p.mergeOf(p.byteIDs[a], p.byteIDs[b])
		}
	}
	return p, nil
}

// encodeTiktoken appends the ids of piece to dst, merging with tiktoken-go.
func (p *pieceEncoder) encodeTiktoken(dst []int, piece string) []int {
	// tiktoken-go looks the whole piece up first too; doing it here saves
	// its regexp2 match for the common case.
	if id, ok := p.ranks[piece]; ok {
		return append(dst, id)
	}
	return append(dst, p.whole.EncodeOrdinary(piece)...)
}

// encode appends the ids of piece to dst, merging by the merge list.
//
// A piece that is a whole token is that token, as in tiktoken: merging its
// bytes reproduces it for every token of Qwen's vocabulary (tested).
func (p *pieceEncoder) encode(dst []int, piece string) []int {
	if id, ok := p.ranks[piece]; ok {
		return append(dst, id)
	}
	if len(piece) > longPiece {
		return p.mergeLong(dst, piece)
	}
	return p.merge(dst, piece)
}

// longPiece is the length above which merge's quadratic scan gives way to
// mergeLong's heap (runs of spaces or of CJK text can be long).
const longPiece = 64

const noMerge = math.MaxInt32

// mergeOf returns the id of the token that joins left and right, or noMerge.
// Merged ids grow with the merge's position in the list (checked by Load),
// so the id is also the merge's priority.
func (p *pieceEncoder) mergeOf(left, right int32) int32 {
	if id, ok := p.merges[pairKey(left, right)]; ok {
		return id
	}
	return noMerge
}

// merge starts from the piece's bytes and joins the adjacent pair with the
// earliest merge, leftmost among equals, until no pair has a merge. ids[i]
// is part i and next[i] the merge of parts i and i+1.
func (p *pieceEncoder) merge(dst []int, piece string) []int {
	var idsBuf, nextBuf [longPiece]int32
	n := len(piece)
	ids, next := idsBuf[:n], nextBuf[:n]
	for i := 0; i < n; i++ {
		ids[i] = p.byteIDs[piece[i]]
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
		ids[at] = best
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

// mergeLong gives merge's result in O(n log n): the parts form a linked
// list and candidate joins wait in a heap ordered by merge, then position.
// A popped candidate is dropped if either of its parts has changed since.
func (p *pieceEncoder) mergeLong(dst []int, piece string) []int {
	n := len(piece)
	type part struct {
		id         int32
		prev, next int // neighbours, -1 at the ends
		version    int // bumped when the part changes or is absorbed
	}
	parts := make([]part, n)
	for i := range parts {
		parts[i] = part{id: p.byteIDs[piece[i]], prev: i - 1, next: i + 1}
	}
	parts[n-1].next = -1
	h := &joinHeap{}
	push := func(i int) {
		j := parts[i].next
		if j < 0 {
			return
		}
		if m := p.mergeOf(parts[i].id, parts[j].id); m != noMerge {
			heap.Push(h, join{merged: m, left: i, lv: parts[i].version, rv: parts[j].version})
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
		l.id = c.merged
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
		dst = append(dst, int(parts[i].id))
	}
	return dst
}

// join is a candidate merge of part left with its right neighbour; lv and
// rv are the parts' versions when it was found.
type join struct {
	merged int32
	left   int
	lv, rv int
}

// joinHeap orders candidates as merge's scan picks them: earliest merge,
// then leftmost (part indices keep the text's order).
type joinHeap []join

func (h joinHeap) Len() int { return len(h) }
func (h joinHeap) Less(i, j int) bool {
	if h[i].merged != h[j].merged {
		return h[i].merged < h[j].merged
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
