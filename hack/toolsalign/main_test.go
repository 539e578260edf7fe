package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestCompare: a module two lists use at different versions raises the
// lower to the higher (semantic order, pseudo-versions below the release
// they precede); a module one list alone uses is left alone; a list that
// replaces a module it is behind on is a problem naming it.
func TestCompare(t *testing.T) {
	lists := []map[string]module{
		{"golang.org/x/sys": {version: "v0.48.0"}, "only.example/a": {version: "v1.0.0"}, "k8s.io/api": {version: "v0.37.2"},
			"golang.org/x/exp": {version: "v0.0.0-20260410095643-746e56fc9e2f"}},
		{"golang.org/x/sys": {version: "v0.49.0"}, "k8s.io/api": {version: "v0.37.2"},
			"golang.org/x/exp": {version: "v0.0.0-20261014143641-f0251eb4aa3e"}},
		{"golang.org/x/sys": {version: "v0.49.0"}, "k8s.io/api": {version: "v0.37.1", replaced: true}, "only.example/b": {version: "v2.0.0"}},
	}
	gets, problems := compare(lists)
	want := map[int][]string{0: {"golang.org/x/exp@v0.0.0-20261014143641-f0251eb4aa3e", "golang.org/x/sys@v0.49.0"}}
	if !reflect.DeepEqual(gets, want) {
		t.Errorf("gets %v, want %v", gets, want)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "replaces k8s.io/api with v0.37.1, another module uses v0.37.2") {
		t.Errorf("problems %q", problems)
	}
	if gets, problems := compare(lists[:2][1:]); len(gets) != 0 || len(problems) != 0 {
		t.Errorf("one list: %v, %q; want nothing to do", gets, problems)
	}
}
