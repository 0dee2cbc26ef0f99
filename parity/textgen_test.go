package parity

import (
	"math/rand/v2"
	"strings"
	"unicode/utf8"
)

// generateTexts makes about size bytes of deterministic text for the
// tokenizer comparison, as many documents: first a thousand short ones
// (edge cases at the boundaries of a text), then documents of up to 8 KiB.
// Each is a run of segments of the kinds below, chosen at random, so that
// kinds meet at their edges (a digit after an emoji, a space run before a
// special token), which is where pre-tokenizers go wrong.
func generateTexts(r *rand.Rand, size int) []string {
	var docs []string
	total := 0
	for total < size {
		limit := 1 + r.IntN(8<<10)
		if len(docs) < 1000 {
			limit = 1 + r.IntN(24)
		}
		var b strings.Builder
		for b.Len() < limit {
			segments[r.IntN(len(segments))](r, &b)
		}
		s := b.String()
		docs = append(docs, s)
		total += len(s)
	}
	return docs
}

// segments each append one random piece of text.
var segments = []func(*rand.Rand, *strings.Builder){
	randomBytes, randomRunes, scriptWords, scriptWords, scriptWords, words, words, words,
	emoji, whitespace, whitespace, digits, code, code, specials, combining,
}

// randomBytes: random bytes made valid UTF-8 (invalid sequences become
// U+FFFD), mostly ASCII-range control and punctuation soup.
func randomBytes(r *rand.Rand, b *strings.Builder) {
	p := make([]byte, 1+r.IntN(64))
	for i := range p {
		p[i] = byte(r.UintN(256))
	}
	b.WriteString(strings.ToValidUTF8(string(p), "\uFFFD"))
}

// randomRunes: code points from the whole range but the surrogates.
func randomRunes(r *rand.Rand, b *strings.Builder) {
	for range 1 + r.IntN(24) {
		c := rune(r.IntN(0x110000))
		if utf8.ValidRune(c) {
			b.WriteRune(c)
		}
	}
}

// scripts are blocks of letters (and marks) of many writing systems.
var scripts = [][2]rune{
	{'a', 'z'}, {'A', 'Z'}, {0x00C0, 0x024F}, // Latin, Latin-1 and Extended
	{0x0370, 0x03FF}, {0x0400, 0x04FF}, {0x0530, 0x058F}, // Greek, Cyrillic, Armenian
	{0x0590, 0x05FF}, {0x0600, 0x06FF}, {0x0900, 0x097F}, // Hebrew, Arabic, Devanagari
	{0x0980, 0x09FF}, {0x0B80, 0x0BFF}, {0x0E00, 0x0E7F}, // Bengali, Tamil, Thai
	{0x10A0, 0x10FF}, {0x1100, 0x11FF}, {0x1200, 0x137F}, // Georgian, Hangul Jamo, Ethiopic
	{0x3040, 0x30FF}, {0x4E00, 0x9FFF}, {0xAC00, 0xD7A3}, // kana, CJK, Hangul syllables
	{0xFF00, 0xFFEF}, {0x1D400, 0x1D7FF}, {0x20000, 0x2A6DF}, // fullwidth, math letters, CJK B
}

// scriptWords: "words" of random letters of one script, separated by
// spaces or punctuation.
func scriptWords(r *rand.Rand, b *strings.Builder) {
	s := scripts[r.IntN(len(scripts))]
	for range 1 + r.IntN(12) {
		for range 1 + r.IntN(9) {
			b.WriteRune(s[0] + rune(r.IntN(int(s[1]-s[0]+1))))
		}
		b.WriteString([]string{" ", " ", " ", ", ", ". ", "、", "。", "!", "?", "-", "'", "\n"}[r.IntN(12)])
	}
}

// vocabulary: real words in several languages, with case and contractions
// (Qwen's pattern matches 's 't 're 've 'm 'll 'd case-insensitively).
var vocabulary = strings.Fields(`the of and to in is that it was for on are with as I his they be at one have this from
Hello World HELLO don't DON'T I'm I'M we're WE'RE you've YOU'VE she'll SHE'LL he'd HE'D it's IT'S can't o'clock
rock'n'roll naïve café Übermäßig straße Ärger façade coöperate résumé São Paulo Kraków Düsseldorf
Привет мир Москва Ёжик Ελλάδα καλημέρα שלום עולם مرحبا بالعالم नमस्ते दुनिया হ্যালো வணக்கம் สวัสดี
こんにちは 世界 東京 カタカナ ひらがな 你好 中文 北京 한국어 안녕하세요 서울 ქართული Հայերեն
Tiếng Việt Türkçe İstanbul ıi İI Ǆemal ǅemal ǆemal ﬁnance ﬂow Æther œuvre ß ẞ`)

func words(r *rand.Rand, b *strings.Builder) {
	for range 1 + r.IntN(16) {
		b.WriteString(vocabulary[r.IntN(len(vocabulary))])
		b.WriteString([]string{" ", " ", " ", " ", ",", ", ", ".", ". ", ":", ";", "!", "?", "\n", "  ", " (", ") ", "\"", "'"}[r.IntN(18)])
	}
}

// emoji: single, with skin tones and presentation selectors, ZWJ families,
// flags, keycaps and tags.
var emojiList = []string{"😀", "😂", "🥲", "👍", "👍🏽", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷", "🇯🇵", "🇺🇸",
	"❤️", "❤", "✨", "🔥", "1️⃣", "#️⃣", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "🧑🏿‍🚀", "☕", "⌚", "🫠", "🪿", "©️", "™", "↔️"}

func emoji(r *rand.Rand, b *strings.Builder) {
	for range 1 + r.IntN(10) {
		b.WriteString(emojiList[r.IntN(len(emojiList))])
		if r.IntN(3) == 0 {
			b.WriteByte(' ')
		}
	}
}

// whitespace: runs of every kind of space and line break, the pattern's
// \s+(?!\S) and \s*[\r\n]+ branches.
var spaces = []string{" ", " ", " ", "\t", "\n", "\n", "\r\n", "\r", "\v", "\f", "\u00a0", "\u2003", "\u3000",
	"\u2028", "\u2029", "\u0085", "\u200b", "\ufeff", "\u180e", "\u202f"}

func whitespace(r *rand.Rand, b *strings.Builder) {
	for range 1 + r.IntN(12) {
		b.WriteString(spaces[r.IntN(len(spaces))])
	}
	if r.IntN(2) == 0 {
		b.WriteString(vocabulary[r.IntN(len(vocabulary))])
	}
}

// digits: runs of digits (Qwen splits every digit), with separators, and
// digits of other scripts.
func digits(r *rand.Rand, b *strings.Builder) {
	sets := []string{"0123456789", "0123456789", "٠١٢٣٤٥٦٧٨٩", "०१२३४५६७८९", "０１２３４５６７８９", "¹²³½¾"}
	set := []rune(sets[r.IntN(len(sets))])
	for range 1 + r.IntN(30) {
		b.WriteRune(set[r.IntN(len(set))])
		if r.IntN(6) == 0 {
			b.WriteString([]string{",", ".", " ", "-", "e", "x", "%", "$", "₹"}[r.IntN(9)])
		}
	}
}

// code: fragments of Go, Python, C, JSON, shell and markup.
var codeBits = []string{"func main() {\n", "\tif err != nil {\n\t\treturn err\n\t}\n", "}\n", "def f(x):\n", "    return x ** 2\n",
	"#include <stdio.h>\n", "int main(void) { printf(\"%d\\n\", 42); }\n", "x := []int{1, 2, 3}\n", "for i in range(10):\n",
	"{\"key\": [1, 2.5e-3, null, true], \"k2\": \"v\"}", "$ ls -la | grep '^d' && echo $HOME\n", "<div class=\"a\">&nbsp;</div>",
	"a==b", "a!==b", "x=>x+1", "i++;", "/* comment */", "// TODO: fix\n", "    ", "\t\t", "\n\n\n", "```python\n", "```\n",
	"SELECT * FROM t WHERE id = 1;", "λx.x", "0x1F", "1_000_000", "__init__", "self.x", "@decorator\n", "#!/bin/bash\n",
	"<|", "|>", "<>", "<<", ">>", "'''", "\"\"\"", "\\n", "\\u00e9", "ab's", "AB'S", "x'y", "''", "'re'", "'LL"}

func code(r *rand.Rand, b *strings.Builder) {
	for range 1 + r.IntN(8) {
		b.WriteString(codeBits[r.IntN(len(codeBits))])
	}
}

// specials: Qwen's added tokens, whole, cut off, nested and glued to text.
var specialBits = []string{"<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>",
	"</tool_call>", "<|fim_prefix|>", "<|vision_pad|>", "<|im_start|>user\n", "<|im_start|>assistant\n<think>\n",
	"<|im_", "<|im_start", "im_end|>", "<think", "<<|im_end|>>", "<|im_start|><|im_end|>", "< |im_start| >", "<|IM_START|>"}

func specials(r *rand.Rand, b *strings.Builder) {
	for range 1 + r.IntN(4) {
		b.WriteString(specialBits[r.IntN(len(specialBits))])
		if r.IntN(2) == 0 {
			b.WriteString(vocabulary[r.IntN(len(vocabulary))])
		}
	}
}

// combining: letters followed by combining marks, decomposed accents and
// conjoining Hangul jamo, which NFC composes (or not).
func combining(r *rand.Rand, b *strings.Builder) {
	for range 1 + r.IntN(8) {
		switch r.IntN(3) {
		case 0:
			b.WriteRune(rune('a' + r.IntN(26)))
			for range r.IntN(4) {
				b.WriteRune(0x0300 + rune(r.IntN(0x70)))
			}
		case 1:
			b.WriteString([]string{"e\u0301", "A\u030a", "n\u0303", "o\u0308\u0304", "\u0915\u093c", "\u212b", "\u2126", "Å"}[r.IntN(8)])
		default:
			b.WriteRune(0x1100 + rune(r.IntN(19)))
			b.WriteRune(0x1161 + rune(r.IntN(21)))
			if r.IntN(2) == 0 {
				b.WriteRune(0x11A8 + rune(r.IntN(27)))
			}
		}
	}
	b.WriteByte(' ')
}
