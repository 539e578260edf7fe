package wrapper

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/schematest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden/diff")

// golden compares got with testdata/golden/diff/name, or rewrites it with
// -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testtools.Root(), "testdata", "golden", "diff", name)
	if *update {
		testtools.WriteFile(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it); got:\n%s", name, got)
	}
}

// TestWrapperDiffGolden: the diff of the latest upstream chart, as text and
// as JSON, for an install and a migration, is the golden output.
func TestWrapperDiffGolden(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"rke2-install", []string{"--distro=rke2"}},
		{"rke-migrate", []string{"--distro=rke", "--mode=migrate", "--kube-version=v1.26.15", "--set", "image.tag=v1.26.14"}},
		{"k3s-context1", []string{"--distro=k3s", "--context=1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"diff", "ccm", chart}, c.args...)
			out, errOut, code := runRenderer(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, testtools.LatestChartVersion+"-"+c.name+".txt", out)
			js, errOut, code := runRenderer(t, append(args, "-o", "json")...)
			if code != 0 {
				t.Fatalf("-o json: exit %d: %s", code, errOut)
			}
			golden(t, testtools.LatestChartVersion+"-"+c.name+".json", js)
		})
	}
}

// diffEntry is an entry of diff -o json.
type diffEntry struct {
	APIVersion, Kind, Namespace, Name, Change, Diff string
	Fields                                          []struct {
		Path, Op      string
		Before, After any
	}
	Object map[string]any
}

// TestWrapperDiffJSON: -o json lists the changed objects with their changed
// fields, and the diff text of each; the same objects as the text output;
// [] without changes.
func TestWrapperDiffJSON(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	out, errOut, code := runRenderer(t, "diff", "ccm", chart, "--distro=rke", "--mode=migrate", "--kube-version=v1.26.15", "--set", "image.tag=v1.26.14", "-o", "json", "--detailed-exitcode")
	if code != 2 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var entries []diffEntry
	if err := json.Unmarshal(out, &entries); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Change+" "+e.Kind+" "+e.Namespace+"/"+e.Name)
	}
	want := []string{
		"changed ClusterRole kube-system/system:cloud-controller-manager",
		"added ConfigMap kube-system/aws-cloud-controller-manager-leader-migration",
		"added Role kube-system/aws-cloud-controller-manager-leader-migration",
		"added RoleBinding kube-system/aws-cloud-controller-manager-leader-migration",
		"changed DaemonSet kube-system/aws-cloud-controller-manager",
	}
	if !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	ds := entries[len(entries)-1]
	paths := map[string]string{}
	for _, f := range ds.Fields {
		paths[f.Path] = f.Op
	}
	for path, op := range map[string]string{
		"spec.template.spec.hostNetwork":                                                "add",
		"spec.template.spec.containers[name=aws-cloud-controller-manager].args":         "replace",
		"spec.template.spec.containers[name=aws-cloud-controller-manager].volumeMounts": "add",
		"spec.template.spec.volumes":                                                    "add",
		`spec.template.spec.nodeSelector["node-role.kubernetes.io/controlplane"]`:       "add",
		`spec.template.spec.nodeSelector["node-role.kubernetes.io/control-plane"]`:      "remove",
	} {
		if paths[path] != op {
			t.Errorf("DaemonSet field %s: %q, want %q (fields %v)", path, paths[path], op, paths)
		}
	}
	if cm := entries[1]; cm.Object["kind"] != "ConfigMap" || !strings.HasPrefix(cm.Diff, "+ apiVersion: v1\n") || len(cm.Fields) != 0 {
		t.Errorf("added ConfigMap: %+v", cm)
	}
	// Without changes: an empty list, exit 0.
	out, errOut, code = runRenderer(t, "diff", "ccm", testtools.SampleChart(), "--allow-missing-workload", "--set", "image=busybox", "-o", "json", "--detailed-exitcode")
	if code != 0 || string(out) != "[]\n" {
		t.Errorf("no changes: exit %d, %q, %s", code, out, errOut)
	}
	if _, errOut, code := runRenderer(t, "diff", "ccm", chart, "-o", "yaml"); code != 2 || !strings.Contains(string(errOut), "--output \"yaml\": use text or json") {
		t.Errorf("-o yaml: exit %d, %s", code, errOut)
	}
}

// TestWrapperDiffContext: --context sets the unchanged lines around each
// change; -1 shows whole objects.
func TestWrapperDiffContext(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	count := func(args ...string) (hunks, context int) {
		out, errOut, code := runRenderer(t, append([]string{"diff", "ccm", chart, "--distro=rke2"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		for _, l := range strings.Split(string(out), "\n") {
			switch {
			case strings.HasPrefix(l, "@@ "):
				hunks++
			case strings.HasPrefix(l, "  "):
				context++
			}
		}
		return hunks, context
	}
	h0, c0 := count("--context=0")
	h3, c3 := count()
	hAll, cAll := count("--context=-1")
	if c0 != 0 || c3 <= c0 || cAll <= c3 || hAll != 2 || h0 < h3 {
		t.Errorf("context 0: %d hunks, %d lines; 3: %d, %d; whole: %d, %d", h0, c0, h3, c3, hAll, cAll)
	}
	if _, errOut, code := runRenderer(t, "diff", "ccm", chart, "--context=-2"); code != 2 || !strings.Contains(string(errOut), "--context -2") {
		t.Errorf("--context=-2: exit %d, %s", code, errOut)
	}
}

// TestWrapperDiffSchema: the golden JSON outputs validate against
// docs/diff.schema.json, and the schema refuses what it should.
func TestWrapperDiffSchema(t *testing.T) {
	schema := schematest.Compile(t, "diff.schema.json")
	validate := func(s string) error {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
		if err != nil {
			return err
		}
		return schema.Validate(inst)
	}
	files, _ := filepath.Glob(filepath.Join(testtools.Root(), "testdata", "golden", "diff", "*.json"))
	if len(files) < 3 {
		t.Fatalf("golden JSON files: %v", files)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(string(b)); err != nil {
			t.Errorf("%s: %v", filepath.Base(file), err)
		}
	}
	for name, bad := range map[string]string{
		"unknown change":     `[{"apiVersion":"v1","kind":"A","namespace":"n","name":"a","change":"moved","diff":""}]`,
		"added without body": `[{"apiVersion":"v1","kind":"A","namespace":"n","name":"a","change":"added","diff":""}]`,
		"changed, no fields": `[{"apiVersion":"v1","kind":"A","namespace":"n","name":"a","change":"changed","diff":""}]`,
		"unknown op":         `[{"apiVersion":"v1","kind":"A","namespace":"n","name":"a","change":"changed","diff":"","fields":[{"path":"x","op":"move"}]}]`,
		"not a list":         `{}`,
	} {
		if validate(bad) == nil {
			t.Errorf("%s: the schema accepts %s", name, bad)
		}
	}
	if err := validate("[]"); err != nil {
		t.Errorf("no changes: %v", err)
	}
}

// TestWrapperDiffHelmDiffFlags: helm-diff's habits without a cluster to
// reach: $KUBECONFIG makes diff ask the cluster, and when it cannot, the
// error says that --renderer-only does not; diff upgrade RELEASE CHART is
// diff RELEASE CHART, -C is --context, --suppress-secrets says it has
// nothing to do; contradictory flags are usage errors.
func TestWrapperDiffHelmDiffFlags(t *testing.T) {
	chart := testtools.UpstreamChart(t, testtools.LatestChartVersion)
	// A kubeconfig whose cluster nothing listens on.
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	testtools.WriteFile(t, kc, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: none\n  cluster: {server: \"https://127.0.0.1:1\"}\n"+
		"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: none\n  context: {cluster: none, user: u}\ncurrent-context: none\n"))
	env := append(testtools.HelmEnv(t), "KUBECONFIG="+kc)

	plain, errOut, code := runRenderer(t, "diff", "ccm", chart, "--distro=rke2")
	if code != 0 || !strings.HasSuffix(string(plain), " → patched by aws-ccm-renderer)\n") || len(errOut) != 0 {
		t.Fatalf("diff without a cluster: exit %d, %s", code, errOut)
	}
	out, errOut, code := runWith(t, env, "", "diff", "ccm", chart, "--distro=rke2")
	if code != 3 || len(out) != 0 || strings.Count(string(errOut), "\n") != 1 ||
		!strings.HasSuffix(string(errOut), " (diff compares with the release in the cluster of $KUBECONFIG; --renderer-only does not ask the cluster)\n") {
		t.Errorf("$KUBECONFIG's cluster unreachable: exit %d, stdout %d bytes, stderr %q", code, len(out), errOut)
	}
	for _, args := range [][]string{
		{"diff", "ccm", chart, "--distro=rke2", "--renderer-only"},
		{"diff", "upgrade", "ccm", chart, "--distro=rke2", "--renderer-only"},
		{"diff", "ccm", chart, "--distro=rke2", "--deployed=false"},
	} {
		if out, errOut, code := runWith(t, env, "", args...); code != 0 || string(out) != string(plain) || len(errOut) != 0 {
			t.Errorf("%v with $KUBECONFIG's cluster unreachable: exit %d, stderr %q, stdout the same as without a cluster: %v", args[1:], code, errOut, string(out) == string(plain))
		}
	}
	short, _, _ := runRenderer(t, "diff", "ccm", chart, "--distro=rke2", "-C", "1")
	long, _, _ := runRenderer(t, "diff", "ccm", chart, "--distro=rke2", "--context=1")
	if string(short) != string(long) || string(short) == string(plain) {
		t.Errorf("-C 1 and --context=1 differ, or are the default context:\n%s", short)
	}
	out, errOut, code = runRenderer(t, "diff", "ccm", chart, "--distro=rke2", "--suppress-secrets")
	if code != 0 || string(out) != string(plain) ||
		string(errOut) != "aws-ccm-renderer: --suppress-secrets: nothing to do, diff never prints a Secret's values (each shows as a tag)\n" {
		t.Errorf("--suppress-secrets: exit %d, stderr %q", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--renderer-only", "--live"}, "[live renderer-only]"},
		{[]string{"--three-way-merge", "--deployed"}, "[deployed three-way-merge]"},
		{[]string{"--renderer-only", "--allow-unreleased"}, "[allow-unreleased renderer-only]"},
	} {
		out, errOut, code := runWith(t, env, "", append([]string{"diff", "ccm", chart}, c.args...)...)
		wantError(t, strings.Join(c.args, " "), out, errOut, code, 2, c.want)
	}
	out, errOut, code = runRenderer(t, "diff", "upgrade", "ccm", chart, "extra")
	wantError(t, "diff upgrade with three more arguments", out, errOut, code, 2, "accepts at most 2 arg(s)")
}
