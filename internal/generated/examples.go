package generated

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// An example marker in a document names the file (from the repository's
// top) whose text the fenced block after it shows:
//
//	<!-- example: testdata/check/rke2/check.txt -->
//
// or, with "tail", the file's last lines, as many as the block has:
//
//	<!-- example: testdata/check/fleet/check.txt tail -->
//
// The files are the real-cluster tests' golden files, so a document's
// transcript is what the test last saw.
var exampleMarker = regexp.MustCompile("(?m)^<!-- example: (\\S+)( tail)? -->\n\n?```[a-z]*\n")

// ExampleDocs are the documents that carry example markers.
var ExampleDocs = []string{"README.md", "docs/check.md"}

// Examples checks the example blocks of the document at path (relative to
// root) and returns the problems, or with write, rewrites the blocks from
// their files. A marker whose file is missing, or without a closed block,
// is a problem either way.
func Examples(root, path string, write bool) ([]string, error) {
	doc, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return nil, err
	}
	var problems []string
	var out bytes.Buffer
	rest := doc
	for {
		m := exampleMarker.FindSubmatchIndex(rest)
		if m == nil {
			out.Write(rest)
			break
		}
		out.Write(rest[:m[1]])
		src, tail := string(rest[m[2]:m[3]]), m[4] >= 0
		body := rest[m[1]:]
		end := bytes.Index(body, []byte("```"))
		if end < 0 {
			return nil, fmt.Errorf("%s: the example of %s has no closing ```", path, src)
		}
		block := body[:end]
		want, err := os.ReadFile(filepath.Join(root, src))
		if err != nil {
			return nil, fmt.Errorf("%s: example: %w", path, err)
		}
		if tail {
			want = lastLines(want, bytes.Count(block, []byte("\n")))
		}
		if !bytes.Equal(block, want) {
			problems = append(problems, fmt.Sprintf("%s: the example of %s is not the file as it is (run make generate)", path, src))
		}
		out.Write(want)
		rest = body[end:]
	}
	if write && len(problems) > 0 {
		if err := os.WriteFile(filepath.Join(root, path), out.Bytes(), 0o644); err != nil {
			return nil, err
		}
		return nil, nil
	}
	return problems, nil
}

// lastLines returns the last n lines of text.
func lastLines(text []byte, n int) []byte {
	lines := strings.SplitAfter(string(text), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if n > len(lines) {
		n = len(lines)
	}
	return []byte(strings.Join(lines[len(lines)-n:], ""))
}
