package store

import "io"

// CountingWriter passes writes to W and counts the bytes W accepted: the size
// of an object being streamed, known before its writer closes.
type CountingWriter struct {
	W io.Writer
	N int64
}

// Write writes p to W and adds what W accepted to N.
func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
