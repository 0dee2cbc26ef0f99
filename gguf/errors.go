package gguf

import (
	"errors"
	"fmt"
	"strconv"
	"unicode"
)

// Kinds of error, for errors.Is. The messages themselves are sentences
// that name the file and what is wrong; these only classify them.
var (
	// ErrMalformed marks a file that breaks the GGUF format (or this
	// package's limits, such as at most 4 dims).
	ErrMalformed = errors.New("malformed GGUF file")
	// ErrUnsupported marks a valid file or request that this package
	// cannot serve: another version, big-endian, a tensor type it cannot
	// dequantize or quantize.
	ErrUnsupported = errors.New("unsupported GGUF feature")
	// ErrNoKey marks a metadata key that the file lacks.
	ErrNoKey = errors.New("no such GGUF key")
	// ErrType marks a metadata value of another type than asked for.
	ErrType = errors.New("GGUF value of another type")
)

// fileError is an error of this package: its message is complete, kind
// classifies it and err is the cause, if any.
type fileError struct {
	msg  string
	kind error
	err  error
}

func (e *fileError) Error() string        { return e.msg }
func (e *fileError) Is(target error) bool { return e.kind != nil && target == e.kind }
func (e *fileError) Unwrap() error        { return e.err }

// newError builds the error "gguf NAME: <formatted>" (or "gguf: ..."
// without a name); a %w in format becomes the cause.
func newError(name string, kind error, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	prefix := "gguf: "
	if name != "" {
		prefix = "gguf " + name + ": "
	}
	return &fileError{msg: prefix + err.Error(), kind: kind, err: errors.Unwrap(err)}
}

// maxShown bounds a name in a message: a hostile file may hold a
// megabyte-long key.
const maxShown = 96

// show is a key or tensor name as messages print it: as is when it is
// plain, quoted when it holds spaces, quotes or unprintable bytes (a
// hostile name could otherwise forge a message), and cut when long.
func show(s string) string {
	cut := ""
	if len(s) > maxShown {
		s, cut = s[:maxShown], "..."
	}
	plain := s != ""
	for _, r := range s {
		if r == unicode.ReplacementChar || !unicode.IsGraphic(r) || unicode.IsSpace(r) || r == '"' || r == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return s + cut
	}
	return strconv.Quote(s) + cut
}
