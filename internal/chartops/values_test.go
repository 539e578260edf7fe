package chartops

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

// TestMergeValuesAsHelm: mergeValues merges what Helm's MergeValues does,
// in its order, and fails where it fails.
func TestMergeValuesAsHelm(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.yaml", "image: {repository: r, tag: v1}\nargs: [--v=2]\nnodeSelector: {a: b}\n")
	b := write("b.yaml", "image: {tag: v2}\nnodeSelector: null\nextra: 1\n")
	bad := write("bad.yaml", "a: [\n")
	text := write("cloud.conf", "[Global]\nZone=a\n")
	for _, o := range []values.Options{
		{},
		{ValueFiles: []string{a, b}},
		{ValueFiles: []string{a}, Values: []string{"image.tag=v3,args[0]=--v=4"}, StringValues: []string{"extra=2"},
			JSONValues: []string{`tolerations=[{"key":"k"}]`}, FileValues: []string{"cloudConfig=" + text}, LiteralValues: []string{"image.tag=a,b"}},
		{Values: []string{"x=1"}, LiteralValues: []string{"x=literal"}, FileValues: []string{"x=" + text}},
		{ValueFiles: []string{bad}},
		{ValueFiles: []string{filepath.Join(dir, "none.yaml")}},
		{Values: []string{"a[=1"}},
		{JSONValues: []string{"a={"}},
	} {
		want, werr := o.MergeValues(getter.Providers{})
		got, gerr := mergeValues(o, getter.Providers{}, strings.NewReader(""))
		if !reflect.DeepEqual(got, want) || (gerr == nil) != (werr == nil) {
			t.Errorf("%+v:\n got %v, %v\nwant %v, %v", o, got, gerr, want, werr)
		}
	}
	got, err := mergeValues(values.Options{ValueFiles: []string{a, "-"}}, getter.Providers{}, strings.NewReader("a: 1\n"))
	if err != nil || got["a"] != float64(1) || got["extra"] != nil || got["image"] == nil {
		t.Errorf("-f FILE -f -: %v, %v", got, err)
	}
	for _, o := range []values.Options{
		{ValueFiles: []string{"-", "-"}},
		{FileValues: []string{"b=-"}},
		{ValueFiles: []string{"/dev/zero"}},
		{FileValues: []string{"b=/dev/zero"}},
	} {
		if _, err := mergeValues(o, getter.Providers{}, strings.NewReader("a: 1\n")); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line of refusal", o, err)
		}
	}
}
