package helmcmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// argoFixture is a source directory for generate, run in-process as the
// repo server runs it: the project's sample chart at chart/ (no network),
// a file outside the directory that holds a secret, and a link in the
// directory that leads to it.
type argoFixture struct {
	dir, secretFile string
}

// argoSecret is the content of the file outside the source directory.
const argoSecret = "argoTopSecretKey: s3cr3t-v4lue"

// argoGuard is a guard image pinned by digest.
const argoGuard = "registry.example.com/guard@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func newArgoFixture(t testing.TB) argoFixture {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "chart"), os.DirFS(testtools.SampleChart())); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret.yaml")
	for name, content := range map[string]string{secret: argoSecret + "\n", filepath.Join(dir, "values-prod.yaml"): "flags: [--v=2, --cloud-provider=aws]\n"} {
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(dir, "linked.yaml")); err != nil {
		t.Fatal(err)
	}
	return argoFixture{dir: dir, secretFile: secret}
}

// generate runs aws-ccm-renderer argocd generate in the source directory
// with the environment the repo server would set: the Application's
// parameters (JSON), the plugin env and a 1.35 cluster, as the sample
// chart's CCM. Helm's homes are the test's own.
func (f argoFixture) generate(t *testing.T, params string, env map[string]string) (code int, stdout, stderr string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"} {
		t.Setenv(v, filepath.Join(home, v))
	}
	vars := map[string]string{"ARGOCD_APP_NAME": "ccm", "ARGOCD_APP_NAMESPACE": "kube-system", "KUBE_VERSION": "v1.35.1",
		"ARGOCD_APP_PARAMETERS": params}
	for _, k := range []string{"DISTRO", "MODE", "CHART", "REPO", "CHART_VERSION", "STRICT", "RENDERER_ARGS"} {
		vars["ARGOCD_ENV_"+k] = ""
	}
	for k, v := range env {
		if strings.HasPrefix(k, "PARAM_") {
			vars[k] = v // a parameter's own variable, as the repo server sets it without ARGOCD_APP_PARAMETERS
			continue
		}
		vars["ARGOCD_ENV_"+k] = v
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	t.Chdir(f.dir)
	return run(t, "", "argocd", "generate")
}

// TestArgoGenerateRefusals: what the Application may not ask of generate
// (docs/argocd.md, Threat model) is refused, each with its one line on
// stderr, nothing on stdout and exit 1; the file a refused flag or path
// names is not read into the message.
func TestArgoGenerateRefusals(t *testing.T) {
	f := newArgoFixture(t)
	const chart = `{"name":"chart","string":"./chart"}`
	p := func(more ...string) string { return "[" + strings.Join(append([]string{chart}, more...), ",") + "]" }
	guard := `{"name":"guard-image","string":"` + argoGuard + `"}`
	const notIn = "is not a path in the Application's source directory"
	const setBy = ": set that parameter instead"
	const free = "--host-network, --set-arg, --remove-arg, --allow-missing-workload, --leader-migration-config, --leader-name, --target, --kcm-user, --ccm-version, --allow-version-skew, --token-scope, --guard-image"
	for _, c := range []struct {
		name   string
		params string
		env    map[string]string
		want   string // stderr, after "aws-ccm-renderer: "
	}{
		// RENDERER_ARGS reads no file.
		{"-c FILE", p(), map[string]string{"RENDERER_ARGS": "-c " + f.secretFile},
			"RENDERER_ARGS: -c reads a file, which the plugin does not: give the renderer's options as parameters, or as its flags in RENDERER_ARGS"},
		{"-c the zero device", p(), map[string]string{"RENDERER_ARGS": "-c /dev/zero"}, "RENDERER_ARGS: -c reads a file"},
		{"--config=FILE", p(), map[string]string{"RENDERER_ARGS": "--config=" + f.secretFile}, "RENDERER_ARGS: --config reads a file"},
		{"--config FILE", p(), map[string]string{"RENDERER_ARGS": "--strict=true --config " + f.secretFile}, "RENDERER_ARGS: --strict is set by the parameter strict" + setBy},
		{"--config link", p(), map[string]string{"RENDERER_ARGS": "--allow-version-skew --config linked.yaml"}, "RENDERER_ARGS: --config reads a file"},
		{"-hc FILE", p(), map[string]string{"RENDERER_ARGS": "-hc " + f.secretFile}, "RENDERER_ARGS: -h: generate writes nothing but manifests (run aws-ccm-renderer argocd generate --help by hand)"},
		// Nothing but manifests on stdout.
		{"--help", p(), map[string]string{"RENDERER_ARGS": "--help"}, "RENDERER_ARGS: --help: generate writes nothing but manifests"},
		{"-h", p(), map[string]string{"RENDERER_ARGS": "-h"}, "RENDERER_ARGS: -h: generate writes nothing but manifests"},
		{"--version", p(), map[string]string{"RENDERER_ARGS": "--version"}, "RENDERER_ARGS: --version: generate writes nothing but manifests"},
		{"unknown", p(), map[string]string{"RENDERER_ARGS": "--kubeconfig=/etc/kubernetes/admin.conf"},
			"RENDERER_ARGS: --kubeconfig is none of the renderer's flags it takes: " + free},
		{"a typo", p(), map[string]string{"RENDERER_ARGS": "--host-netwrk"}, "RENDERER_ARGS: --host-netwrk is none of the renderer's flags it takes (did you mean --host-network?): " + free},
		{"--", p(), map[string]string{"RENDERER_ARGS": "-- --config=x"}, "RENDERER_ARGS: -- is none of the renderer's flags it takes"},
		{"an argument", p(), map[string]string{"RENDERER_ARGS": "--host-network true"}, `RENDERER_ARGS: "true" is not a flag`},
		// An option is set in one place: the parameter wins, always.
		{"--distro over distro", p(`{"name":"distro","string":"rke2"}`), map[string]string{"RENDERER_ARGS": "--distro=k3s"},
			"RENDERER_ARGS: --distro is set by the parameter distro" + setBy},
		{"--distro over DISTRO", p(), map[string]string{"DISTRO": "rke2", "RENDERER_ARGS": "--distro k3s"}, "RENDERER_ARGS: --distro is set by the parameter distro" + setBy},
		{"--distro over the default", p(), map[string]string{"RENDERER_ARGS": "--distro=k3s"}, "RENDERER_ARGS: --distro is set by the parameter distro" + setBy},
		{"--mode", p(), map[string]string{"RENDERER_ARGS": "--mode=migrate"}, "RENDERER_ARGS: --mode is set by the parameter mode" + setBy},
		{"--strict=false over strict", p(`{"name":"strict","string":"true"}`), map[string]string{"RENDERER_ARGS": "--strict=false"},
			"RENDERER_ARGS: --strict is set by the parameter strict" + setBy},
		{"--guard-image= over guard-image", p(guard), map[string]string{"RENDERER_ARGS": "--guard-image="},
			"RENDERER_ARGS: --guard-image is set by the parameter guard-image" + setBy},
		{"--set-arg over set-arg", p(`{"name":"set-arg","array":["v=4"]}`), map[string]string{"RENDERER_ARGS": "--set-arg=v=2"},
			"RENDERER_ARGS: --set-arg is set by the parameter set-arg" + setBy},
		{"--remove-arg over remove-arg", p(`{"name":"remove-arg","array":["v"]}`), map[string]string{"RENDERER_ARGS": "--remove-arg=cloud-config"},
			"RENDERER_ARGS: --remove-arg is set by the parameter remove-arg" + setBy},
		{"--ccm-version over ccm-version", p(`{"name":"ccm-version","string":"v1.35.0"}`), map[string]string{"RENDERER_ARGS": "--ccm-version=v1.30.0"},
			"RENDERER_ARGS: --ccm-version is set by the parameter ccm-version" + setBy},
		{"--kube-version", p(), map[string]string{"RENDERER_ARGS": "--kube-version=v1.26.0"},
			"RENDERER_ARGS: --kube-version is set by KUBE_VERSION, the destination cluster's version that Argo CD sends"},
		// No guard, no output.
		{"a guard with nothing to guard", p(guard, `{"name":"helm-set","array":["image=busybox"]}`, `{"name":"strict","string":"false"}`),
			map[string]string{"RENDERER_ARGS": "--allow-missing-workload"},
			"guard-image: the output has no guard, as the renderer found no CCM workload to add it to; generate does not go on without it"},
		// https:// or oci:// only.
		{"chart http", `[{"name":"chart","string":"http://charts.example.com/ccm-1.0.0.tgz"}]`, nil,
			"chart: http://charts.example.com/ccm-1.0.0.tgz is a plain http:// URL, which anyone on the way may change; use https:// (or an oci:// reference)"},
		{"CHART HTTP", "", map[string]string{"CHART": "HTTP://charts.example.com/ccm-1.0.0.tgz"}, "chart: HTTP://charts.example.com/ccm-1.0.0.tgz is a plain http:// URL"},
		{"repo http", `[{"name":"repo","string":"http://charts.example.com"}]`, nil,
			"repo: http://charts.example.com is a plain http:// URL, which anyone on the way may change; use https://"},
		{"REPO http", "", map[string]string{"REPO": "http://charts.example.com"}, "repo: http://charts.example.com is a plain http:// URL"},
		{"repo a path", `[{"name":"repo","string":"/etc"}]`, nil, "repo: /etc is not an https:// URL of a chart repository"},
		{"REPO file scheme", "", map[string]string{"REPO": "file:///etc"}, "repo: file:///etc is not an https:// URL of a chart repository"},
		// No control character in a parameter's value: a line break in a
		// chart value would be a line of the chart's YAML.
		{"helm-set with a line feed", p(`{"name":"helm-set","array":["image.tag=v1.35.0\"\n          command: [sh]\n          x: \"y"]}`), nil,
			`parameter helm-set, item 1: the value holds a line feed (U+000A) at byte 18: "image.tag=v1.35.0\"\n command: [sh]`},
		{"PARAM helm-set with an escape", "", map[string]string{"CHART": "./chart", "PARAM_HELM_SET_0": "a=b", "PARAM_HELM_SET_1": "nameOverride=\x1b[31mred"},
			`parameter helm-set, item 2: the value holds an escape (U+001B)`},
		{"distro with a line separator", p(`{"name":"distro","string":"rke2\u2028"}`), nil, `parameter distro: the value holds a line separator (U+2028)`},
		{"DISTRO with a carriage return", p(), map[string]string{"DISTRO": "rke2\r"}, `ARGOCD_ENV_DISTRO: the value holds a carriage return (U+000D)`},
		{"RENDERER_ARGS with a line feed", p(), map[string]string{"RENDERER_ARGS": "--token-scope=controllers\n--host-network"}, `ARGOCD_ENV_RENDERER_ARGS: the value holds a line feed (U+000A)`},
		// Paths (as before).
		{"values-files out", p(`{"name":"values-files","array":["` + f.secretFile + `"]}`), nil, "values-files: " + f.secretFile + " " + notIn},
		{"values-files link out", p(`{"name":"values-files","array":["linked.yaml"]}`), nil, "values-files: linked.yaml " + notIn},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := f.generate(t, c.params, c.env)
			if code != cli.ExitInput || out != "" || !strings.HasPrefix(errOut, "aws-ccm-renderer: "+c.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, %d bytes on stdout, stderr %q; want exit 1, nothing on stdout, stderr %q", code, len(out), errOut, "aws-ccm-renderer: "+c.want)
			}
			if strings.Contains(errOut, "argoTopSecretKey") || strings.Contains(errOut, "s3cr3t") {
				t.Errorf("the secret file's content is in the message: %q", errOut)
			}
		})
	}
}

// TestArgoGenerateAllowed: RENDERER_ARGS sets the options nothing else
// sets, the first version's --set-arg and --remove-arg too when the
// parameter is not set; the guard of guard-image is in the output; a
// note on stderr goes there only on success.
func TestArgoGenerateAllowed(t *testing.T) {
	f := newArgoFixture(t)
	code, out, errOut := f.generate(t, `[{"name":"chart","string":"./chart"},{"name":"distro","string":"rke2"},{"name":"guard-image","string":"`+argoGuard+`"}]`,
		map[string]string{"RENDERER_ARGS": "--set-arg=cluster-name=prod --remove-arg=v --token-scope controllers --allow-version-skew"})
	if code != 0 || errOut != "" || !hasGuard(out, argoGuard) || !strings.Contains(out, "- --cluster-name=prod") || strings.Contains(out, "- --v=2") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	// strict false: the warning on stderr, after the output is made.
	code, out, errOut = f.generate(t, `[{"name":"chart","string":"./chart"},{"name":"strict","string":"false"},{"name":"set-arg","array":["configure-cloud-routes=true"]}]`, nil)
	if code != 0 || out == "" || !strings.HasPrefix(errOut, "aws-ccm-renderer: warning: --configure-cloud-routes=true") {
		t.Errorf("strict false: exit %d, stderr %q", code, errOut)
	}
	// ccm-version auto says what it picked, and not when generate fails
	// (the upstream chart: image.tag).
	pkg, err := os.ReadFile(testtools.UpstreamChart(t, testtools.LatestChartVersion))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "upstream.tgz"), pkg, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = f.generate(t, `[{"name":"chart","string":"upstream.tgz"},{"name":"ccm-version","string":"auto"}]`, nil)
	if code != 0 || out == "" || !strings.Contains(errOut, "ccm-version auto: KUBE_VERSION v1.35.1") {
		t.Errorf("ccm-version auto: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut = f.generate(t, `[{"name":"chart","string":"./chart"},{"name":"ccm-version","string":"auto"},{"name":"values-files","array":["missing.yaml"]}]`, nil)
	if code == 0 || out != "" || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "ccm-version auto") {
		t.Errorf("ccm-version auto, failing: exit %d, stderr %q", code, errOut)
	}
}

// FuzzArgoGenerate: whatever RENDERER_ARGS and the parameters hold,
// generate does not panic; when it fails, stdout is empty and stderr one
// line without the content of the file outside the source directory;
// when it succeeds, stdout is Kubernetes objects only, with the guard when
// the guard-image parameter is set.
func FuzzArgoGenerate(f *testing.F) {
	fx := newArgoFixture(f)
	chart := `{"name":"chart","string":"./chart"}`
	guard := `{"name":"guard-image","string":"` + argoGuard + `"}`
	for _, seed := range [][2]string{
		{"", "[" + chart + "]"},
		{"", "[" + chart + "," + guard + "]"},
		{"--token-scope=controllers --host-network", "[" + chart + "," + guard + "]"},
		{"--allow-missing-workload", "[" + chart + "," + guard + `,{"name":"helm-set","array":["image=busybox"]}]`},
		{"--target=DaemonSet/kube-system/aws-cloud-controller-manager", "[" + chart + "," + guard + "]"},
		{"--guard-image=", "[" + chart + "," + guard + "]"},
		{"--guard-image=x", "[" + chart + "]"},
		{"-c " + fx.secretFile, "[" + chart + "]"},
		{"--config " + fx.secretFile, "[" + chart + "]"},
		{"-c the zero device", "[" + chart + "]"},
		{"--help", "[" + chart + "]"},
		{"-h --version", "[" + chart + "]"},
		{"--distro=k3s --strict=false", "[" + chart + `,{"name":"distro","string":"rke2"}]`},
		{"--set-arg v=4", "[" + chart + "]"},
		{"--remove-arg=cloud-provider", "[" + chart + "]"},
		{"", "[" + chart + `,{"name":"values-files","array":["` + fx.secretFile + `"]}]`},
		{"", "[" + chart + `,{"name":"values-files","array":["linked.yaml"]}]`},
		{"", `[{"name":"chart","string":"./linked.yaml"}]`},
		{"", `[{"name":"chart","string":"` + fx.secretFile + `"}]`},
		{"", `[{"name":"chart","string":"http://127.0.0.1:1/x.tgz"}]`},
		{"", `[{"name":"repo","string":"http://127.0.0.1:1"}]`},
		{"", `[{"name":"chart","string":"./values-prod.yaml"}]`},
		{"--leader-name -x", "[" + chart + `,{"name":"mode","string":"migrate"}]`},
		{"", `{"name":"chart"}`},
		{"", "[" + chart + `,{"name":"helm-set","map":{"a":"b"}}]`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, rendererArgs, params string) {
		if strings.ContainsRune(rendererArgs+params, 0) {
			t.Skip("no environment variable holds a NUL")
		}
		if !strings.Contains(params, `"chart"`) {
			params = strings.Replace(params, "[", "["+chart+",", 1) // the chart here, not the upstream repository's
		}
		// Nothing that could reach the network: the test is offline. A
		// chart that is a name is looked up in a repository.
		var ps []struct {
			Name   string  `json:"name"`
			String *string `json:"string"`
		}
		if json.Unmarshal([]byte(params), &ps) == nil {
			local := false
			for _, p := range ps {
				if p.String == nil {
					continue
				}
				v := *p.String
				if strings.Contains(v, "://") && !plainHTTP(v) {
					t.Skip("a remote chart or repository")
				}
				if p.Name == "chart" {
					local = strings.ContainsAny(v, "/:") || strings.HasSuffix(v, ".tgz") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "-")
				}
			}
			if !local {
				t.Skip("a chart in the upstream repository")
			}
		}
		code, out, errOut := fx.generate(t, params, map[string]string{"RENDERER_ARGS": rendererArgs})
		if code != 0 {
			if out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "aws-ccm-renderer: ") {
				t.Errorf("exit %d with %d bytes on stdout, stderr %q", code, len(out), errOut)
			}
			if strings.Contains(errOut, "argoTopSecretKey") || strings.Contains(errOut, "s3cr3t") {
				t.Errorf("the secret file's content is in the message: %q", errOut)
			}
			return
		}
		objs, err := manifest.Split([]byte(out))
		if err != nil || len(objs) == 0 {
			t.Errorf("stdout is not manifests (%v):\n%s", err, out)
		}
		for _, o := range objs {
			if o.Kind == "" {
				t.Errorf("stdout holds a document that is no object:\n%s", o.Raw)
			}
		}
		if strings.Contains(params, argoGuard) && !hasGuard(out, argoGuard) {
			t.Errorf("the guard-image parameter's guard is not in the output:\n%s", out)
		}
	})
}
