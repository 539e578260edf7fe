package safetext

import (
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile are the characters that break a line, a comment or a terminal.
var hostile = []string{"\n", "\r", "\t", "\v", "\f", "\x00", "\x1b[31m", "\x7f", "\u0085", "\u009b", "\u2028", "\u2029", "\u202e", "\u2066", "\xff"}

func TestCheck(t *testing.T) {
	for _, ok := range []string{"", "v=4", "cluster-name=prod", "é ü 日本", "a b", `C:\x\y`, "\u00a0", "→ ✓"} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
		if Escape(ok) != ok {
			t.Errorf("Escape(%q) = %q, want it unchanged", ok, Escape(ok))
		}
	}
	for _, h := range hostile {
		s := "a=b" + h + "c"
		err := Check(s)
		if err == nil {
			t.Errorf("Check(%q): nil, want an error", s)
			continue
		}
		if HasControl(err.Error()) || !strings.Contains(err.Error(), "at byte 3") {
			t.Errorf("Check(%q): %q: want the position and no raw control character", s, err)
		}
	}
	if err := Check("a\nb"); err == nil || !strings.Contains(err.Error(), "a line feed (U+000A)") {
		t.Errorf("Check of a line feed: %v", err)
	}
}

func TestEscape(t *testing.T) {
	for s, want := range map[string]string{
		"a\nb":           `a\nb`,
		"\x1b[31mred":    `\x1b[31mred`,
		"ctx\u2028x":     `ctx\u2028x`,
		"\xffname":       `\xffname`,
		"é\u202eevil":    `é\u202eevil`,
		"tab\there\x7f":  `tab\there\x7f`,
		"next\u0085line": `next\u0085line`,
	} {
		if got := Escape(s); got != want {
			t.Errorf("Escape(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzEscape: whatever the text, its escape holds no control character,
// is valid UTF-8, and is the text itself when Check accepts it.
func FuzzEscape(f *testing.F) {
	for _, h := range hostile {
		f.Add("x" + h + "y")
	}
	f.Add("plain")
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		if HasControl(e) || !utf8.ValidString(e) {
			t.Fatalf("Escape(%q) = %q holds a control character", s, e)
		}
		if (Check(s) == nil) != (e == s) {
			t.Fatalf("Check(%q) = %v but Escape changed it to %q", s, Check(s), e)
		}
	})
}

// TestShellWord: a shell reads each quoted word back as it was (bash runs
// printf with it), and a quoted word holds no control character and no
// "-->".
func TestShellWord(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("no bash to read the words back:", err)
	}
	words := []string{"plain", "--out=overlays", "", "a b", "it's", `back\slash`, "$(id)", "x=--> y", "é\u00a0ü"}
	for _, h := range hostile {
		if h != "\x00" { // no command line holds a NUL, nor can a shell word
			words = append(words, "--set-arg=v"+h+"resources:\n- https://evil.example/x")
		}
	}
	var script strings.Builder
	for _, w := range words {
		q := ShellWord(w)
		if HasControl(q) || strings.Contains(q, "-->") {
			t.Errorf("ShellWord(%q) = %q", w, q)
		}
		script.WriteString("printf '%s\\0' " + q + "\n")
	}
	out, err := exec.Command(bash, "-c", script.String()).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(words) {
		t.Fatalf("bash read %d words back, want %d: %q", len(got), len(words), got)
	}
	for i, w := range words {
		if got[i] != w {
			t.Errorf("ShellWord(%q) = %q, which bash reads as %q", w, ShellWord(w), got[i])
		}
	}
}
