package diff

import (
	"strings"
)

// The line diff under the object diff (diff.go): Myers' shortest edit
// script in linear space.

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

type diffOp struct {
	kind byte // ' ', '-', '+'
	line string
	a, b int // line indexes (0-based) in a and b where the op stands
}

// diffLines computes a shortest edit script from a to b with Myers' O(ND)
// algorithm in linear space (divide and conquer on the middle snake), so
// large streams cost time in proportion to their differences, not memory in
// proportion to their sizes squared. In each run of changes, deletions come
// before insertions.
func diffLines(a, b []string) []diffOp {
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	m := &myers{a: intern(a), b: intern(b)}
	n := len(a) + len(b)
	m.vf, m.vb = make([]int, 2*n+3), make([]int, 2*n+3)
	m.compare(0, len(a), 0, len(b))

	// Deletions first within each run of changes, then the positions.
	kinds := m.kinds
	for i := 0; i < len(kinds); {
		if kinds[i] == ' ' {
			i++
			continue
		}
		j, dels := i, 0
		for ; j < len(kinds) && kinds[j] != ' '; j++ {
			if kinds[j] == '-' {
				dels++
			}
		}
		for k := i; k < j; k++ {
			kinds[k] = '+'
			if k-i < dels {
				kinds[k] = '-'
			}
		}
		i = j
	}
	ops := make([]diffOp, len(kinds))
	ai, bi := 0, 0
	for i, k := range kinds {
		ops[i] = diffOp{kind: k, a: ai, b: bi}
		switch k {
		case ' ':
			ops[i].line = a[ai]
			ai, bi = ai+1, bi+1
		case '-':
			ops[i].line = a[ai]
			ai++
		case '+':
			ops[i].line = b[bi]
			bi++
		}
	}
	return ops
}

// myers holds the state of one diff: the lines as numbers, the forward and
// backward frontiers, and the edit kinds found so far, in order.
type myers struct {
	a, b   []int
	vf, vb []int
	kinds  []byte
}

func (m *myers) emit(kind byte, n int) {
	for ; n > 0; n-- {
		m.kinds = append(m.kinds, kind)
	}
}

// compare appends the edit script of a[a0:a1] → b[b0:b1].
func (m *myers) compare(a0, a1, b0, b1 int) {
	pre := 0
	for a0+pre < a1 && b0+pre < b1 && m.a[a0+pre] == m.b[b0+pre] {
		pre++
	}
	m.emit(' ', pre)
	a0, b0 = a0+pre, b0+pre
	suf := 0
	for a1-suf > a0 && b1-suf > b0 && m.a[a1-1-suf] == m.b[b1-1-suf] {
		suf++
	}
	a1, b1 = a1-suf, b1-suf
	switch {
	case a0 == a1:
		m.emit('+', b1-b0)
	case b0 == b1:
		m.emit('-', a1-a0)
	default:
		x, y, u, v := m.middleSnake(a0, a1, b0, b1)
		m.compare(a0, x, b0, y)
		m.emit(' ', u-x)
		m.compare(u, a1, v, b1)
	}
	m.emit(' ', suf)
}

// middleSnake returns the middle snake (x, y) → (u, v), in absolute
// positions, of a shortest edit script of a[a0:a1] → b[b0:b1]; both are
// non-empty and differ in their first and last lines, so the script has at
// least two edits and each half is a smaller problem.
func (m *myers) middleSnake(a0, a1, b0, b1 int) (x, y, u, v int) {
	n, mm := a1-a0, b1-b0
	delta := n - mm
	odd := delta&1 != 0
	off := n + mm + 1 // index of diagonal 0 in vf and vb
	vf, vb := m.vf, m.vb
	vf[off+1], vb[off+1] = 0, 0
	for d := 0; d <= (n+mm+1)/2; d++ {
		// Forward: vf[k] is the furthest x on diagonal k = x - y.
		for k := -d; k <= d; k += 2 {
			var px int
			if k == -d || (k != d && vf[off+k-1] < vf[off+k+1]) {
				px = vf[off+k+1]
			} else {
				px = vf[off+k-1] + 1
			}
			py := px - k
			sx, sy := px, py
			for px < n && py < mm && m.a[a0+px] == m.b[b0+py] {
				px, py = px+1, py+1
			}
			vf[off+k] = px
			// The backward path on this diagonal has taken d-1 steps.
			if kb := delta - k; odd && kb >= -(d-1) && kb <= d-1 && px+vb[off+kb] >= n {
				return a0 + sx, b0 + sy, a0 + px, b0 + py
			}
		}
		// Backward, on the reversed sequences: vb[k] is the furthest x
		// from the end on diagonal k.
		for k := -d; k <= d; k += 2 {
			var px int
			if k == -d || (k != d && vb[off+k-1] < vb[off+k+1]) {
				px = vb[off+k+1]
			} else {
				px = vb[off+k-1] + 1
			}
			py := px - k
			sx, sy := px, py
			for px < n && py < mm && m.a[a1-1-px] == m.b[b1-1-py] {
				px, py = px+1, py+1
			}
			vb[off+k] = px
			if kf := delta - k; !odd && kf >= -d && kf <= d && px+vf[off+kf] >= n {
				return a1 - px, b1 - py, a1 - sx, b1 - sy
			}
		}
	}
	panic("diff: no middle snake")
}
