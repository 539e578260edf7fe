package kubeversion

import (
	"strconv"
	"strings"
	"testing"
)

// Good are versions every command takes, and what they read as.
var good = []struct{ in, want string }{
	{"v1.34.2", "1.34.2"},
	{"1.34.2", "1.34.2"},
	{"1.34", "1.34"},
	{"v1.26", "1.26"},
	{"v1.0.0", "1.0.0"},
	{"v1.30.14+rke2r1", "1.30.14+rke2r1"},
	{"v1.33.4+k3s1", "1.33.4+k3s1"},
	{"v1.26.15-eks-ab12cd3", "1.26.15-eks-ab12cd3"},
	{"v1.28.3-gke.1286000", "1.28.3-gke.1286000"},
	{"v1.35.0-alpha.0", "1.35.0-alpha.0"},
	{"v1.31.0-alpha.1.123+0a1b2c3d", "1.31.0-alpha.1.123+0a1b2c3d"},
	{"v1.2147483647.0", "1.2147483647.0"},
}

// Bad are what every command refuses (the examples first), with
// part of the reason.
var Bad = []struct{ in, why string }{
	{"v1.34.x", `patch "x" is not a number`},
	{"v1.35.2;id", `";id" after the patch`},
	{"1.034", `minor "034" has a leading zero`},
	{"1.99999999999999999999", "minor 99999999999999999999 is out of range"},
	{"", "it is empty"},
	{"garbage", `major "garbage" is not a number`},
	{"v2.0.0", "Kubernetes versions are 1.x, not 2.x"},
	{"01.34", `major "01" has a leading zero`},
	{"1.34.02", `patch "02" has a leading zero`},
	{"1.2147483648", "out of range"},
	{"1.34.99999999999999999999", "patch 99999999999999999999 is out of range"},
	{" v1.34.2", "not a number"},
	{"v1.34.2 ", `" " after the patch`},
	{"v1.34.2\n", `"\n" after the patch`},
	{"vv1.34", "not a number"},
	{"V1.34", "not a number"},
	{"1", "give 1.MINOR or 1.MINOR.PATCH"},
	{"1.", "no minor"},
	{"1.34.", "no patch"},
	{"1.34-rc.1", `"-rc.1" after the minor`},
	{"1.34.2.1", `".1" after the patch`},
	{"1.34.2-", "an empty part"},
	{"1.34.2-rc.01", `"01" has a leading zero`},
	{"1.34.2+", "an empty part"},
	{"1.34.2+a..b", "an empty part"},
	{"1.34.2-a_b", `'_' is not a letter`},
	{"1.34.2+rke2r1;rm", `';' is not a letter`},
	{"1.34.2-\u00e9", "is not a letter"},
	{"+1.34", "not a number"},
	{"-1.34", "not a number"},
	{"1.+34", "not a number"},
	{"v1.34.2" + strings.Repeat("0", 200), "more than any version"},
}

// maxErr bounds an error's length: the input cut to MaxLen bytes and a
// part cut to 24, each byte quoted in at most 4 characters.
const maxErr = 4*MaxLen + 4*24 + 200

func TestParse(t *testing.T) {
	for _, c := range good {
		v, err := Parse(c.in)
		if err != nil || v.String() != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %s", c.in, v, err, c.want)
		}
	}
	for _, c := range Bad {
		v, err := Parse(c.in)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error with %q", c.in, v, c.why)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.why) || strings.Contains(msg, "\n") || len(msg) > maxErr {
			t.Errorf("Parse(%q): %q, want one line with %q", c.in, msg, c.why)
		}
	}
}

func TestMinorNormalizeIsRelease(t *testing.T) {
	if m, err := Minor("v1.30.14+rke2r1"); m != 30 || err != nil {
		t.Errorf("Minor: %d, %v", m, err)
	}
	if m, err := Minor("1.99999999999999999999"); err == nil {
		t.Errorf("Minor of an overflow: %d", m)
	}
	if n, err := Normalize("1.26"); n != "v1.26" || err != nil {
		t.Errorf("Normalize(1.26) = %q, %v", n, err)
	}
	if n, err := Normalize("1.034"); err == nil {
		t.Errorf("Normalize(1.034) = %q", n)
	}
	for s, want := range map[string]bool{"v1.34.3": true, "v1.35.0-alpha.0": true, "1.34.3": false, "v1.34": false,
		"v1.34.3+x": false, "v1.034.3": false, "v1.99999999999999999999.0": false, "latest": false} {
		if IsRelease(s) != want {
			t.Errorf("IsRelease(%q) = %v", s, !want)
		}
	}
}

// FuzzParse: whatever it takes is spelled as the grammar says and reads
// back to itself; whatever it refuses it says why in one line.
func FuzzParse(f *testing.F) {
	for _, c := range good {
		f.Add(c.in)
	}
	for _, c := range Bad {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			if v != nil || strings.Contains(err.Error(), "\n") || len(err.Error()) > maxErr {
				t.Fatalf("Parse(%q): %v, %q", s, v, err)
			}
			return
		}
		if v.Major() != 1 || len(s) > MaxLen {
			t.Fatalf("Parse(%q) = %v", s, v)
		}
		// Read back: the input is the value's text, with or without a v.
		if got := strings.TrimPrefix(s, "v"); got != v.String() {
			t.Fatalf("Parse(%q) = %s", s, v)
		}
		for _, part := range strings.FieldsFunc(strings.SplitN(strings.SplitN(v.String(), "-", 2)[0], "+", 2)[0], func(r rune) bool { return r == '.' }) {
			if n, err := strconv.ParseUint(part, 10, 31); err != nil || strconv.FormatUint(n, 10) != part {
				t.Fatalf("Parse(%q): part %q", s, part)
			}
		}
		if again, err := Parse(v.String()); err != nil || again.String() != v.String() {
			t.Fatalf("Parse(%q) again: %v, %v", v.String(), again, err)
		}
	})
}
