package tokenizer

import "unicode/utf8"

// GPT-2's byte-level alphabet: every byte is shown as one printable rune so
// that a vocabulary of byte strings can be stored as JSON text. Printable
// Latin-1 bytes stand for themselves; the other 68 bytes (controls, space,
// DEL, NBSP, soft hyphen, ...) are moved to U+0100 and up in byte order, which
// is why a space appears as "Ġ" (U+0120) in tokenizer.json.

// byteToRune maps a byte to the rune that stands for it in the vocabulary.
var byteToRune [256]rune

// runeToByte is the inverse of byteToRune; -1 marks runes outside the
// alphabet. Every rune of the alphabet is below 0x144.
var runeToByte [0x144]int16

func init() {
	printable := func(b int) bool {
		return ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF)
	}
	for i := range runeToByte {
		runeToByte[i] = -1
	}
	next := rune(0x100)
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !printable(b) {
			r = next
			next++
		}
		byteToRune[b] = r
		runeToByte[r] = int16(b)
	}
}

// byteLevelDecode turns a vocabulary string back into the bytes it stands
// for. ok is false when the string holds a rune outside the alphabet.
func byteLevelDecode(s string) (b []byte, ok bool) {
	return appendByteLevelDecode(make([]byte, 0, len(s)), []byte(s))
}

// appendByteLevelDecode is byteLevelDecode appending to dst.
func appendByteLevelDecode(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if runeToByte[c] < 0 {
				return dst, false
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if int(r) >= len(runeToByte) || runeToByte[r] < 0 {
			return dst, false
		}
		dst = append(dst, byte(runeToByte[r]))
		i += n
	}
	return dst, true
}

// byteLevelEncode is the inverse of byteLevelDecode.
func byteLevelEncode(b []byte) string {
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = byteToRune[c]
	}
	return string(rs)
}
