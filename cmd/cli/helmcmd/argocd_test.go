package helmcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
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

// TestArgoCCMVersion: ccm-version auto pins the newest release of
// KUBE_VERSION's minor, from the release data, by its digest; a tag is
// pinned by the promotion list's digest or the one given with it, and
// without either refused;
// without KUBE_VERSION, with a minor no release is known of, with a
// helm-set of image.tag beside it, or with a value that is no tag, it is
// refused.
func TestArgoCCMVersion(t *testing.T) {
	dir := t.TempDir()
	request := func(params, kubeVersion string) (*argoRequest, error) {
		env := map[string]string{"ARGOCD_APP_NAME": "ccm", "ARGOCD_APP_NAMESPACE": "kube-system", "ARGOCD_APP_PARAMETERS": params}
		if kubeVersion != "" {
			env["KUBE_VERSION"] = kubeVersion
		}
		return readArgoRequest(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, dir)
	}
	unpromoted := 0
	for minor := releases.FirstMinor(); minor <= releases.LastMinor(); minor++ {
		r, err := request(`[{"name":"ccm-version","string":"auto"}]`, fmt.Sprintf("v1.%d.7+rke2r1", minor))
		tag := releases.Tag(minor)
		if c, _ := releases.Of(minor); c.Unpromoted() {
			// The tag alone, with a warning that says how to read its digest.
			unpromoted++
			if err != nil || !slices.Equal(r.sets, []string{"image.tag=" + tag}) || r.unpromoted == nil || r.unpromoted.Tag != tag ||
				!strings.Contains(r.unpromoted.Error(), "crane digest registry.k8s.io/provider-aws/cloud-controller-manager:"+tag) {
				t.Errorf("auto at 1.%d, %s unpromoted: sets %q, %+v, %v; want the tag and the warning", minor, tag, r.sets, r.unpromoted, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := "image.tag=" + releases.Pin(tag); !strings.Contains(want, "@sha256:") || !slices.Equal(r.sets, []string{want}) || r.picked == nil || r.picked.Minor != minor {
			t.Errorf("auto at 1.%d: sets %q, picked %+v; want %s", minor, r.sets, r.picked, want)
		}
	}
	if unpromoted == 0 {
		t.Log("every minor's newest release is promoted: the warning is not exercised")
	}
	r, err := request(`[{"name":"ccm-version","string":"v1.34.3"},{"name":"helm-set","array":["args[0]=--v=2"]}]`, "v1.34.2")
	if err != nil || !slices.Equal(r.sets, []string{"args[0]=--v=2", "image.tag=" + releases.Pin("v1.34.3")}) || r.picked != nil {
		t.Errorf("a promoted tag: %q, %+v, %v", r.sets, r.picked, err)
	}
	digest := "sha256:" + strings.Repeat("ab", 32)
	r, err = request(`[{"name":"ccm-version","string":"v1.40.2@`+digest+`"}]`, "v1.34.2")
	if err != nil || !slices.Equal(r.sets, []string{"image.tag=v1.40.2@" + digest}) {
		t.Errorf("a tag with its digest: %q, %v", r.sets, err)
	}
	r, err = request(`[{"name":"ccm-version","string":""}]`, "v1.34.2")
	if err != nil || len(r.sets) != 0 {
		t.Errorf("unset: %q, %v", r.sets, err)
	}
	for _, c := range []struct{ params, kubeVersion, want string }{
		{`[{"name":"ccm-version","string":"auto"}]`, "", "KUBE_VERSION, which is not set"},
		{`[{"name":"ccm-version","string":"auto"}]`, "v1.99.0", "no CCM release of Kubernetes 1.99"},
		{`[{"name":"ccm-version","string":"auto"},{"name":"helm-set","array":["image.tag=v1.34.3"]}]`, "v1.34.2", "both set the CCM's image tag"},
		{`[{"name":"ccm-version","string":"latest"}]`, "v1.34.2", `ccm-version: "latest" is not a CCM release tag`},
		{`[{"name":"ccm-version","string":"1.34.3"}]`, "v1.34.2", `ccm-version: "1.34.3" is not a CCM release tag`},
		{`[{"name":"ccm-version","string":"v1.40.2"}]`, "v1.34.2", "v1.40.2 is not in registry.k8s.io's promotion list yet"},
		{`[{"name":"ccm-version","string":"v1.34.3@` + "sha256:" + strings.Repeat("cd", 32) + `"}]`, "v1.34.2", "promotion list gives v1.34.3 the digest"},
		{`[{"name":"ccm-version","array":["auto"]}]`, "v1.34.2", "parameter ccm-version is an array"},
	} {
		if _, err := request(c.params, c.kubeVersion); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with KUBE_VERSION %q: %v, want %q", c.params, c.kubeVersion, err, c.want)
		}
	}
}

// TestArgoRendererOptions: the parameters that are the renderer's options
// reach it as its flags, strict true unless the Application says false,
// RENDERER_ARGS after them with the options no parameter sets.
func TestArgoRendererOptions(t *testing.T) {
	env := map[string]string{"ARGOCD_APP_NAME": "ccm", "ARGOCD_APP_NAMESPACE": "kube-system", "KUBE_VERSION": "v1.34.2",
		"ARGOCD_APP_PARAMETERS": `[{"name":"distro","string":"rke2"},{"name":"mode","string":"migrate"},` +
			`{"name":"guard-image","string":"example.com/guard@sha256:` + strings.Repeat("a", 64) + `"},` +
			`{"name":"set-arg","array":["v=4","cluster-name=a b"]},{"name":"remove-arg","array":["cloud-config"]}]`,
		"ARGOCD_ENV_RENDERER_ARGS": "--token-scope=controllers --allow-version-skew"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	r, err := readArgoRequest(lookup, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o, err := r.options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Distro != "rke2" || o.Mode != "migrate" || o.TokenScope != "controllers" || !o.AllowVersionSkew || o.KubeVersion != "v1.34.2" || !strings.HasPrefix(o.GuardImage, "example.com/guard@") || !o.Strict ||
		!slices.Equal(o.SetArgs, []string{"v=4", "cluster-name=a b"}) || !slices.Equal(o.RemoveArgs, []string{"cloud-config"}) {
		t.Errorf("options %+v", o)
	}
	for strict, want := range map[string]string{"false": "", "maybe": `invalid argument "maybe" for "--strict" flag`} {
		env["ARGOCD_APP_PARAMETERS"] = `[{"name":"strict","string":"` + strict + `"}]`
		r, err := readArgoRequest(lookup, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		o, err := r.options()
		switch {
		case want == "" && (err != nil || o.Strict):
			t.Errorf("strict %s: %+v, %v", strict, o, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("strict %s: %v, want %q", strict, err, want)
		}
	}
}
