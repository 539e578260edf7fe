package terminal

import (
	"bytes"
	"errors"
	"testing"

	"github.com/creack/pty"
)

// TestRedactURLs: the credentials of every URL in a text are hidden, a
// password with an "@" in it whole, a user alone (a token) too; what is
// no URL's user information is left as it is.
func TestRedactURLs(t *testing.T) {
	for in, want := range map[string]string{
		"https://ccm:s3cret@charts.example.com/x":                                         "https://ccm:xxxxx@charts.example.com/x",
		`looks like "http://u:p@h:1/c" is not valid: Get "http://u:***@h:1/c/index.yaml"`: `looks like "http://u:xxxxx@h:1/c" is not valid: Get "http://u:xxxxx@h:1/c/index.yaml"`,
		"oci://robot:pa@ss@registry.example.com/charts":                                   "oci://robot:xxxxx@registry.example.com/charts",
		"https://ghp_t0ken@github.example.com/r":                                          "https://xxxxx@github.example.com/r",
		"https://u:@h/":                                                                   "https://u:xxxxx@h/",
		"a https://a:1@h b http://c:2@i?x=y@z c":                                          "a https://a:xxxxx@h b http://c:xxxxx@i?x=y@z c",
		"https://charts.example.com/x@y":                                                  "https://charts.example.com/x@y",
		"mail ccm@example.com, https://h:443 and a@b":                                     "mail ccm@example.com, https://h:443 and a@b",
		"https://h/x\nhttps://u:p@h2\r\n":                                                 "https://h/x\nhttps://u:xxxxx@h2\r\n",
		"":                                                                                "",
	} {
		if got := RedactURLs(in); got != want {
			t.Errorf("RedactURLs(%q) = %q, want %q", in, got, want)
		}
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestRedacting: a write is redacted whole and counted as given; an error
// of the writer beneath is the write's; wrapping twice is once; a
// terminal stays one through it.
func TestRedacting(t *testing.T) {
	var b bytes.Buffer
	w := Redacting(&b)
	msg := []byte("fetching https://ccm:s3cret@h/c.tgz ...\n")
	if n, err := w.Write(msg); n != len(msg) || err != nil || b.String() != "fetching https://ccm:xxxxx@h/c.tgz ...\n" {
		t.Errorf("wrote %d, %v: %q", n, err, b.String())
	}
	if n, err := Redacting(failing{}).Write(msg); n != 0 || err == nil {
		t.Errorf("a failing writer: %d, %v", n, err)
	}
	if Redacting(w) != w {
		t.Error("wrapped twice")
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if !IsTerminal(Redacting(tty)) || IsTerminal(Redacting(&b)) {
		t.Error("a terminal is not one through Redacting, or a buffer is")
	}
}
