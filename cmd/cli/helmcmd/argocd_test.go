package helmcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInside: what generate takes for a path in the source directory, as
// the first version's realpath-based check did: links followed, the last
// part of the path allowed not to exist (loading it then says so), a
// missing directory on the way, a link out or nowhere refused.
func TestInside(t *testing.T) {
	dir := t.TempDir()
	outside, err := filepath.EvalSymlinks(t.TempDir()) // as the check reports it
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"env", "charts/ccm"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for from, to := range map[string]string{
		"out":        outside,
		"env/prod":   filepath.Join(dir, "env"),
		"nowhere":    filepath.Join(dir, "missing"),
		"env/looped": filepath.Join(dir, "env", "looped"),
	} {
		if err := os.Symlink(to, filepath.Join(dir, from)); err != nil {
			t.Fatal(err)
		}
	}
	for p, want := range map[string]string{
		"values.yaml":          "", // not there: loading says so
		"env/prod/values.yaml": "",
		"charts/ccm":           "",
		".":                    "",
		"./charts/../env":      "is not a path in the Application's source directory",
		"/etc/passwd":          "is not a path in the Application's source directory",
		"missing/values.yaml":  "is not a path in the Application's source directory",
		"out/secrets.yaml":     "(it leads to " + outside + string(filepath.Separator) + "secrets.yaml)",
		"out":                  "(it leads to " + outside + ")",
		"nowhere":              "is not a path in the Application's source directory",
		"env/looped":           "is not a path in the Application's source directory",
	} {
		err := inside(dir, "values-files", p)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", p, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), "values-files: "+p+" ") || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", p, err, want)
		}
	}
}

// TestArgoParams: ARGOCD_APP_PARAMETERS wins over PARAM_*, which are read
// without it, array items in order until the first missing index.
func TestArgoParams(t *testing.T) {
	env := map[string]string{
		"PARAM_DISTRO": "rke", "PARAM_SET_ARG_0": "v=4", "PARAM_SET_ARG_1": "cluster-name=a b", "PARAM_SET_ARG_3": "skipped",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	strs, arrays, err := argoParams(lookup)
	if err != nil || strs["distro"] != "rke" || strings.Join(arrays["set-arg"], "|") != "v=4|cluster-name=a b" {
		t.Errorf("PARAM_*: %v %v %v", strs, arrays, err)
	}
	env["ARGOCD_APP_PARAMETERS"] = `[{"name":"distro","string":"k3s"},{"name":"strict","string":""}]`
	strs, arrays, err = argoParams(lookup)
	if err != nil || strs["distro"] != "k3s" || len(arrays["set-arg"]) != 0 || strs["strict"] != "" {
		t.Errorf("ARGOCD_APP_PARAMETERS: %v %v %v", strs, arrays, err)
	}
	for raw, want := range map[string]string{
		`{"name":"distro"}`: "is not the JSON list of parameters Argo CD sends",
		`[{"name":"distro","string":"a"},{"name":"distro","string":"b"}]`: "parameter distro is set twice",
	} {
		env["ARGOCD_APP_PARAMETERS"] = raw
		if _, _, err := argoParams(lookup); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}
