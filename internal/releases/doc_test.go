package releases

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated section of docs/compatibility.md")

// root is the repository's root: the test runs in this package's
// directory, two below it.
func root(t *testing.T) string {
	t.Helper()
	return filepath.Join("..", "..")
}

var generated = regexp.MustCompile("(?s)(<!-- BEGIN GENERATED: releases -->\n).*?(<!-- END GENERATED -->)")

// TestCompatibilityDoc: docs/compatibility.md's table is the release data;
// -update rewrites it.
func TestCompatibilityDoc(t *testing.T) {
	path := filepath.Join(root(t), "docs", "compatibility.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !generated.Match(doc) {
		t.Fatalf("%s has no generated section", path)
	}
	want := generated.ReplaceAll(doc, []byte("${1}"+strings.ReplaceAll(CompatibilityMarkdown(), "$", "$$")+"${2}"))
	if string(want) == string(doc) {
		return
	}
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is stale: go test ./internal/releases -update rewrites it", path)
}

// TestReadmePin: the tag the README's quick start pins is the release data's
// for the minor its --kube-version names, by the promotion list's digest.
func TestReadmePin(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`--set image.tag=(v1\.(\d+)\.\d+)(@sha256:[0-9a-f]{64})? \\\n(?:.*\n)*?.*--kube-version=v1\.(\d+)\.`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("the README's quick start pins no image.tag with a --kube-version")
	}
	if m[2] != m[4] {
		t.Errorf("the README pins %s for a 1.%s cluster", m[1], m[4])
	}
	if m[3] != "@"+Promoted[m[1]] {
		t.Errorf("the README pins %s%s, not by the promotion list's digest %s", m[1], m[3], Promoted[m[1]])
	}
	var minor int
	for _, c := range m[2] {
		minor = minor*10 + int(c-'0')
	}
	if tag, _ := Latest(minor); tag != m[1] {
		t.Errorf("the README pins %s, the release data %s", m[1], tag)
	}
}
