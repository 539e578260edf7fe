package releases

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// root is the repository's root: the test runs in this package's
// directory, two below it.
func root(t *testing.T) string {
	t.Helper()
	return filepath.Join("..", "..")
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
