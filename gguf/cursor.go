package gguf

import "encoding/binary"

// cursor reads the header little-endian, checking each read against the
// bytes that remain so that no length taken from the file is trusted
// before it is known to fit.
type cursor struct {
	data []byte
	off  int
	name string // the file, for messages
}

// remaining is the number of unread bytes.
func (c *cursor) remaining() int { return len(c.data) - c.off }

// take returns the next n bytes, or an error naming what was being read.
func (c *cursor) take(n uint64, what func() string) ([]byte, error) {
	if n > uint64(c.remaining()) {
		return nil, newError(c.name, ErrMalformed, "file ends inside %s at offset %d (%d bytes needed, %d left)", what(), c.off, n, c.remaining())
	}
	b := c.data[c.off : c.off+int(n)]
	c.off += int(n)
	return b, nil
}

func (c *cursor) u8(what func() string) (uint8, error) {
	b, err := c.take(1, what)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (c *cursor) u16(what func() string) (uint16, error) {
	b, err := c.take(2, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(b), nil
}

func (c *cursor) u32(what func() string) (uint32, error) {
	b, err := c.take(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (c *cursor) u64(what func() string) (uint64, error) {
	b, err := c.take(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// str reads a string: a uint64 length and that many bytes, copied so that
// it outlives a memory map.
func (c *cursor) str(what func() string) (string, error) {
	n, err := c.u64(what)
	if err != nil {
		return "", err
	}
	b, err := c.take(n, what)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// text is a fixed description for the what arguments.
func text(s string) func() string { return func() string { return s } }
