package generated

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// mdLink is a Markdown link's target: [text](target), not an image's.
var mdLink = regexp.MustCompile(`(?:^|[^!\\])\[[^\]]*\]\(([^)\s]+)\)`)

// heading is a Markdown heading line.
var heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)

// anchor is GitHub's anchor of a heading: lower case, punctuation but
// hyphens and underscores dropped, spaces as hyphens.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are a Markdown file's heading anchors, outside code blocks,
// numbered as GitHub numbers repeated ones.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		m := heading.FindStringSubmatch(line)
		if inCode || m == nil {
			continue
		}
		a := anchor(m[1])
		name := a
		for i := 1; out[name]; i++ {
			name = a + "-" + strconv.Itoa(i)
		}
		out[name] = true
	}
	return out
}

// TestDocLinks: every relative link of the README, the docs and the
// examples' READMEs names a file of the repository, and every #anchor a
// heading of the page it points to.
func TestDocLinks(t *testing.T) {
	root := testtools.Root()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	dev, _ := filepath.Glob(filepath.Join(root, "docs", "dev", "*.md"))
	pages = append(append(pages, dev...), filepath.Join(root, "README.md"))
	_ = filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return err
	})
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		text := string(b)
		// Links in code blocks are code, not links.
		var prose strings.Builder
		inCode := false
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "```") {
				inCode = !inCode
				continue
			}
			if !inCode {
				prose.WriteString(line + "\n")
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(prose.String(), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: the link %s names no file of the repository", rel, target)
					continue
				}
			}
			checked++
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			db, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: the link %s: %v", rel, target, err)
				continue
			}
			if !anchors(string(db))[frag] {
				t.Errorf("%s: the link %s names no heading of %s", rel, target, filepath.Base(dest))
			}
		}
	}
	if checked < 100 {
		t.Errorf("%d links checked: the pattern finds too few", checked)
	}
}
