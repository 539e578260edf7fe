package generated

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// A generated section of a hand-written document is framed by two
// visible markers; the first names what writes the section:
//
//	<!-- BEGIN GENERATED: releases -->
//	...
//	<!-- END GENERATED -->
var section = regexp.MustCompile("(?s)<!-- BEGIN GENERATED: ([^>]*?) -->\n(.*?)<!-- END GENERATED -->")

// Sections checks the generated sections of the document at path
// (relative to root): fill returns each marker's section as it should be.
// It returns the problems (a stale section, or a document with none) and
// the markers it found; with write it rewrites the stale sections and
// returns no problems.
func Sections(root, path string, fill func(marker string) (string, error), write bool) (problems, markers []string, err error) {
	doc, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return nil, nil, err
	}
	var out bytes.Buffer
	last := 0
	for _, m := range section.FindAllSubmatchIndex(doc, -1) {
		marker, body := string(doc[m[2]:m[3]]), string(doc[m[4]:m[5]])
		markers = append(markers, marker)
		want, err := fill(marker)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: the section %q: %w", path, marker, err)
		}
		if want != body {
			problems = append(problems, fmt.Sprintf("%s: the section %q is stale (run make generate):\n%s", path, marker, firstDiff(body, want)))
		}
		out.Write(doc[last:m[4]])
		out.WriteString(want)
		last = m[5]
	}
	out.Write(doc[last:])
	if len(markers) == 0 {
		return []string{path + ": no generated section"}, nil, nil
	}
	if write && len(problems) > 0 {
		return nil, markers, os.WriteFile(filepath.Join(root, path), out.Bytes(), 0o644)
	}
	return problems, markers, nil
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := bytes.Split([]byte(got), []byte("\n")), bytes.Split([]byte(want), []byte("\n"))
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			return fmt.Sprintf("    line %d:\n      has  %q\n      want %q", i+1, gl, wl)
		}
	}
	return ""
}
