package stream

import (
	"bytes"
	"errors"
	"io"
)

// Chunk sizes of ReadStream: small first, for a single release, doubling up
// to a bound for long streams.
const (
	firstChunk = 64 << 10
	maxChunk   = 4 << 20
)

// Read reads a manifest stream into chunks that each end at a document
// boundary, so that every document lies whole in one chunk and the stream is
// never copied into one big buffer: reading costs the input's size plus one
// chunk, not twice the input. sizeHint, when known (a regular file), sizes
// the first chunk.
func Read(r io.Reader, sizeHint int64) ([][]byte, error) {
	return readStream(r, sizeHint, firstChunk, maxChunk)
}

func readStream(r io.Reader, sizeHint int64, firstChunk, maxChunk int) ([][]byte, error) {
	var chunks [][]byte
	size := firstChunk
	if sizeHint > 0 && sizeHint < int64(maxChunk) {
		size = int(sizeHint) + 1 // +1 to see EOF without another chunk
	}
	buf := make([]byte, 0, size)
	for {
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if len(buf) > 0 {
				chunks = append(chunks, buf)
			}
			return chunks, nil
		}
		if err != nil {
			return nil, err
		}
		// The buffer is full: keep the documents it holds whole, carry the
		// last, unfinished one into the next buffer.
		size = min(size*2, maxChunk)
		cut := lastSeparator(buf)
		if cut <= 0 {
			// One document fills the buffer: grow it.
			next := make([]byte, len(buf), max(2*cap(buf), size))
			copy(next, buf)
			buf = next
			continue
		}
		next := make([]byte, len(buf)-cut, max(size, 2*(len(buf)-cut)))
		copy(next, buf[cut:])
		chunks = append(chunks, buf[:cut:cut])
		buf = next
	}
}

// lastSeparator returns the offset of the last "---" line in b that starts a
// document, or -1. The line must be complete (followed by a line break), so
// a separator cut in half by the buffer's end is not mistaken for one.
func lastSeparator(b []byte) int {
	end := len(b)
	for end > 0 {
		i := bytes.LastIndexByte(b[:end], '\n')
		if i < 0 {
			return -1
		}
		// The line after this break is b[i+1 : end of line].
		start := i + 1
		if lineEnd := bytes.IndexByte(b[start:], '\n'); lineEnd >= 0 && isSeparator(b[start:start+lineEnd]) {
			return start
		}
		end = i
	}
	return -1
}
