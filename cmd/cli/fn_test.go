package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/ccmtest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// fnCCM is the small CCM release the function is sent (the shared
// fixture with its account, on control-plane nodes), at a CCM of the
// minor a migration of 1.26 runs.
var fnCCM = ccmtest.Options{Image: ccmtest.ImageTag("v1.26.14"), Args: []string{"--v=2", "--cloud-provider=aws"}, ControlPlane: true, Account: true}

// fnItems are the objects of fnCCM, each of which resourceList gives the
// bookkeeping annotations kustomize puts on the items it sends a function.
var fnItems = ccmtest.Docs(fnCCM)

// bookkeeping returns the annotations kustomize adds to item i.
func bookkeeping(i int) map[string]string {
	return map[string]string{
		"config.kubernetes.io/index":                                      fmt.Sprint(i),
		"internal.config.kubernetes.io/index":                             fmt.Sprint(i),
		"internal.config.kubernetes.io/annotations-migration-resource-id": fmt.Sprint(i),
		"internal.config.kubernetes.io/id":                                fmt.Sprint(i + 1),
		"config.k8s.io/id":                                                fmt.Sprint(i + 1),
	}
}

// resourceList wraps items and a functionConfig (YAML, may be empty) in a
// ResourceList, annotating each item as kustomize does.
func resourceList(t *testing.T, items []string, functionConfig string) string {
	t.Helper()
	list := yaml.MustParse("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n")
	seq := list.Field("items").Value
	seq.YNode().Style = 0 // block, as kustomize writes it
	for i, text := range items {
		n := yaml.MustParse(text)
		if err := n.SetAnnotations(bookkeeping(i)); err != nil {
			t.Fatal(err)
		}
		seq.YNode().Content = append(seq.YNode().Content, n.YNode())
	}
	if functionConfig != "" {
		if err := list.PipeE(yaml.SetField("functionConfig", yaml.MustParse(functionConfig))); err != nil {
			t.Fatal(err)
		}
	}
	return list.MustString()
}

// fnOutput is a ResourceList the function wrote.
type fnOutput struct {
	items   []*yaml.RNode
	results []result
}

func parseFnOutput(t *testing.T, out string) fnOutput {
	t.Helper()
	r := &kio.ByteReader{Reader: strings.NewReader(out), OmitReaderAnnotations: true}
	items, err := r.Read()
	if err != nil || r.WrappingKind != "ResourceList" {
		t.Fatalf("the output is not a ResourceList (%v):\n%s", err, out)
	}
	var o fnOutput
	o.items = items
	if r.Results != nil {
		if err := yaml.Unmarshal([]byte(r.Results.MustString()), &o.results); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

func (o fnOutput) find(kind, name string) *yaml.RNode {
	for _, n := range o.items {
		if n.GetKind() == kind && n.GetName() == name {
			return n
		}
	}
	return nil
}

func lookup(t *testing.T, n *yaml.RNode, path ...string) string {
	t.Helper()
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		return ""
	}
	return strings.TrimSpace(v.MustString())
}

// checkBookkeeping: every item that came in goes back with exactly the
// annotations it came with; an item the function adds carries none of the
// protocol's annotations.
func checkBookkeeping(t *testing.T, o fnOutput) {
	t.Helper()
	for _, n := range o.items {
		got := n.GetAnnotations()
		i, ok := got["config.kubernetes.io/index"]
		if !ok {
			for k := range got {
				if strings.Contains(k, "config.kubernetes.io/") || strings.Contains(k, "config.k8s.io/") {
					t.Errorf("the added %s %s carries %s", n.GetKind(), n.GetName(), k)
				}
			}
			continue
		}
		var idx int
		fmt.Sscan(i, &idx)
		want := bookkeeping(idx)
		for k, v := range got {
			if strings.HasPrefix(k, "aws-ccm-renderer.io/") { // the renderer's own
				delete(got, k)
			} else if want[k] != v {
				t.Errorf("%s %s: annotation %s=%q, sent %q", n.GetKind(), n.GetName(), k, v, want[k])
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s %s: annotations %v, sent %v", n.GetKind(), n.GetName(), got, want)
		}
	}
}

func TestFn(t *testing.T) {
	cases := []struct {
		name, fc string
		items    []string // default fnItems
		check    func(t *testing.T, o fnOutput)
		warning  string // a result of severity warning that must be there
	}{
		{name: "no functionConfig: the defaults", check: func(t *testing.T, o fnOutput) {
			ds := o.find("DaemonSet", "ccm")
			if got := lookup(t, ds, "spec", "template", "spec", "affinity", "nodeAffinity"); !strings.Contains(got, "node-role.kubernetes.io/controlplane") {
				t.Errorf("distro auto: affinity %s", got)
			}
			if lookup(t, ds, "spec", "template", "spec", "hostNetwork") != "true" {
				t.Error("hostNetwork is not true")
			}
			if got := lookup(t, o.find("ClusterRole", "ccm"), "rules"); !strings.Contains(got, "get") {
				t.Errorf("RBAC not patched: %s", got)
			}
		}},
		{name: "ConfigMap with every key", fc: `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  distro: rke
  mode: migrate
  hostNetwork: "false"
  setArgs: |
    v=4
    cluster-name=prod
  removeArgs: " allocate-node-cidrs , configure-routes"
  allowMissingWorkload: "false"
  leaderMigrationConfig: rendered
  leaderName: my-lease
  target: DaemonSet/kube-system/ccm
  kcmUser: system:kcm
  kubeVersion: v1.26.15
  ccmVersion: v1.26.14
  allowVersionSkew: "false"
  strict: "false"
`, check: func(t *testing.T, o fnOutput) {
			ds := o.find("DaemonSet", "ccm")
			spec := ds.Field("spec").Value.Field("template").Value.Field("spec").Value
			if got := lookup(t, spec, "nodeSelector"); got != `node-role.kubernetes.io/controlplane: "true"` {
				t.Errorf("nodeSelector %s", got)
			}
			if lookup(t, spec, "hostNetwork") != "" {
				t.Error("hostNetwork: false is not honoured")
			}
			args := lookup(t, spec, "containers", "[name=ccm]", "args")
			for _, want := range []string{"--v=4", "--cluster-name=prod", "--enable-leader-migration=true", "--leader-migration-config="} {
				if !strings.Contains(args, want) {
					t.Errorf("args lack %s:\n%s", want, args)
				}
			}
			cm := o.find("ConfigMap", renderer.LeaderMigrationConfigMapName("ccm"))
			if cm == nil {
				t.Fatal("no leader migration ConfigMap")
			}
			if got := lookup(t, cm, "data", renderer.LeaderMigrationFile); !strings.Contains(got, `leaderName: "my-lease"`) {
				t.Errorf("leader migration config:\n%s", got)
			}
			role := o.find("Role", renderer.MigrationLeaseRBACName("ccm"))
			binding := o.find("RoleBinding", renderer.MigrationLeaseRBACName("ccm"))
			if role == nil || binding == nil || !strings.Contains(lookup(t, binding, "subjects"), "name: system:kcm") {
				t.Fatalf("no lease Role and RoleBinding for the kcmUser: %v", o.items)
			}
			// The generated objects come right before the workload.
			if i, d := slices.Index(o.items, cm), slices.Index(o.items, ds); i != d-3 || slices.Index(o.items, role) != d-2 || slices.Index(o.items, binding) != d-1 {
				t.Errorf("the ConfigMap is item %d, the DaemonSet %d", i, d)
			}
		}},
		{name: "RendererConfig", fc: `apiVersion: aws-ccm-renderer.io/v1alpha1
kind: RendererConfig
metadata:
  name: c
distro: k3s
setArgs: [v=5]
`, check: func(t *testing.T, o fnOutput) {
			ds := o.find("DaemonSet", "ccm")
			if got := lookup(t, ds, "spec", "template", "spec", "nodeSelector"); got != `node-role.kubernetes.io/control-plane: "true"` {
				t.Errorf("nodeSelector %s", got)
			}
			if got := lookup(t, ds, "spec", "template", "spec", "containers", "[name=ccm]", "args"); !strings.Contains(got, "--v=5") {
				t.Errorf("args %s", got)
			}
		}},
		{name: "allowMissingWorkload passes other objects through", fc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {allowMissingWorkload: \"true\"}\n",
			items: fnItems[:3], warning: "no AWS cloud-controller-manager DaemonSet or Deployment",
			check: func(t *testing.T, o fnOutput) {
				if len(o.items) != 3 || lookup(t, o.find("ClusterRole", "ccm"), "rules") != lookup(t, yaml.MustParse(fnItems[1]), "rules") {
					t.Errorf("items changed: %v", o.items)
				}
			}},
		{name: "an unbound service account is a warning", items: []string{fnItems[3]}, warning: "ccm",
			check: func(t *testing.T, o fnOutput) {
				if len(o.items) != 1 || lookup(t, o.items[0], "spec", "template", "spec", "hostNetwork") != "true" {
					t.Errorf("items: %v", o.items)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			items := c.items
			if items == nil {
				items = fnItems
			}
			code, out, errOut := run(t, resourceList(t, items, c.fc), "fn")
			if code != ExitOK {
				t.Fatalf("exit %d; stderr %q", code, errOut)
			}
			o := parseFnOutput(t, out)
			checkBookkeeping(t, o)
			c.check(t, o)
			var warnings []string
			for _, r := range o.results {
				if r.Severity != severityWarning {
					t.Errorf("result %+v", r)
				}
				warnings = append(warnings, r.Message)
			}
			if c.warning == "" && len(warnings) > 0 {
				t.Errorf("unexpected warnings %q", warnings)
			}
			if c.warning != "" {
				if len(warnings) == 0 || !strings.Contains(warnings[0], c.warning) {
					t.Errorf("warnings %q, want one about %q", warnings, c.warning)
				}
				// kustomize shows a function's stderr, not its results.
				if errOut != "aws-ccm-renderer: warning: "+warnings[0]+"\n" {
					t.Errorf("stderr %q", errOut)
				}
			} else if errOut != "" {
				t.Errorf("stderr %q", errOut)
			}
		})
	}
}

// annotateItems annotates the items of a ResourceList the function wrote as
// kustomize does before it sends them to the next function.
func annotateItems(t *testing.T, rl string) string {
	t.Helper()
	list := yaml.MustParse(rl)
	for i, n := range list.Field("items").Value.Content() {
		for k, v := range bookkeeping(i) {
			if err := yaml.NewRNode(n).PipeE(yaml.SetAnnotation(k, v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return list.MustString()
}

// TestFnIdempotent: the function's output, annotated again, comes back the
// same; the leader migration ConfigMap of an earlier render is regenerated
// with the annotations it came with, and dropped in install mode.
func TestFnIdempotent(t *testing.T) {
	migrate := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {distro: rke2, mode: migrate}\n"
	code, once, errOut := run(t, resourceList(t, fnItems, migrate), "fn")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	in := annotateItems(t, once)
	code, twice, errOut := run(t, in, "fn")
	if code != ExitOK || twice != in {
		t.Errorf("a second run changed the ResourceList (exit %d, %s):\n%s\nvs\n%s", code, errOut, in, twice)
	}
	cmName := renderer.LeaderMigrationConfigMapName("ccm")

	other := strings.Replace(in, "mode: migrate", "mode: migrate, leaderName: other-lease", 1)
	code, out, errOut := run(t, other, "fn")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	o := parseFnOutput(t, out)
	checkBookkeeping(t, o)
	cm := o.find("ConfigMap", cmName)
	if cm == nil || !strings.Contains(lookup(t, cm, "data", renderer.LeaderMigrationFile), "other-lease") {
		t.Errorf("the ConfigMap is not regenerated:\n%s", out)
	}
	if _, ok := cm.GetAnnotations()["config.kubernetes.io/index"]; !ok || strings.Contains(out, "#") {
		t.Errorf("the regenerated ConfigMap lost its annotations or carries a comment:\n%s", cm.MustString())
	}

	install := strings.Replace(in, "mode: migrate", "mode: install", 1)
	code, out, errOut = run(t, install, "fn")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	o = parseFnOutput(t, out)
	checkBookkeeping(t, o)
	if o.find("ConfigMap", cmName) != nil || strings.Contains(out, "leader-migration") {
		t.Errorf("install mode kept the leader migration:\n%s", out)
	}
	if len(o.items) != len(fnItems) {
		t.Errorf("%d items, want %d", len(o.items), len(fnItems))
	}
}

// TestFnErrors: every problem is one line on stderr, a non-zero exit, and,
// once a ResourceList was read, the items unchanged with a result of
// severity error that names the object.
func TestFnErrors(t *testing.T) {
	cm := func(data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: opts\ndata:\n" + data
	}
	badDS := strings.Replace(fnItems[3], "containers:", "containers: not-a-list\n      x:", 1)
	newer := fnCCM
	newer.Image = ccmtest.Image
	ccm135 := ccmtest.DaemonSet(newer)
	// Found before the workload is patched, refused after.
	badRole := strings.Replace(fnItems[1], "rules:", "rules: not-a-list\nx:", 1)
	cases := []struct {
		name, fc string
		items    []string
		want     string       // in the message
		ref      *resourceRef // the object the result names
	}{
		{"unknown ConfigMap key", cm("  distor: rke\n"), nil, "functionConfig ConfigMap opts: data.distor: unknown key (did you mean data.distro?); known keys: distro, mode",
			&resourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: "opts"}},
		{"bad boolean", cm("  hostNetwork: maybe\n"), nil, `functionConfig ConfigMap opts: data.hostNetwork="maybe": want true or false`,
			&resourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: "opts"}},
		{"unknown distro", cm("  distro: bogus\n"), nil, `functionConfig ConfigMap opts: distro "bogus" is unknown: use one of auto, rke, rke2, k3s, kubeadm`,
			&resourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: "opts"}},
		{"unknown mode", cm("  mode: upgrade\n"), nil, `mode "upgrade" is unknown`,
			&resourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: "opts"}},
		{"contradictory args", cm("  setArgs: v=1\n  removeArgs: v\n"), nil, "removeArgs v contradicts v=1",
			&resourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: "opts"}},
		{"leader name outside migrate mode", cm("  leaderName: x\n"), nil, "leaderName only applies to mode: migrate",
			&resourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: "opts"}},
		{"RendererConfig unknown field", "apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\nmetadata: {name: rc}\ndistros: rke\n", nil,
			`functionConfig RendererConfig rc: line 4: unknown key "distros" (did you mean distro?); the keys: apiVersion, kind, metadata, distro,`,
			&resourceRef{APIVersion: "aws-ccm-renderer.io/v1alpha1", Kind: "RendererConfig", Name: "rc"}},
		{"RendererConfig of another API version", "apiVersion: example.com/v1\nkind: RendererConfig\nmetadata: {name: rc}\n", nil,
			"want apiVersion aws-ccm-renderer.io/v1alpha1 and kind RendererConfig",
			&resourceRef{APIVersion: "example.com/v1", Kind: "RendererConfig", Name: "rc"}},
		{"another kind", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n", nil,
			"functionConfig Secret s: want a RendererConfig (apiVersion aws-ccm-renderer.io/v1alpha1) or a ConfigMap",
			&resourceRef{APIVersion: "v1", Kind: "Secret", Name: "s"}},
		{"no workload", "", fnItems[:3], "no AWS cloud-controller-manager DaemonSet or Deployment among the 3 objects of the input (the CCM is recognised by its executable aws-cloud-controller-manager or its image .../provider-aws/cloud-controller-manager); name an unusual build with target: KIND/NAMESPACE/NAME, or pass allowMissingWorkload: true", nil},
		{"a role of the wrong shape", "", []string{fnItems[0], badRole, fnItems[2], fnItems[3]}, "ClusterRole ccm",
			&resourceRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "ccm"}},
		{"a warning with strict", cm("  strict: \"true\"\n"), []string{fnItems[3]}, "is bound to ServiceAccount", nil},
		{"a warning with strict, its own", cm("  strict: \"true\"\n"), []string{fnItems[3]}, "(strict: warnings are errors)", nil},
		{"a risky setArgs with strict", cm("  strict: \"true\"\n  setArgs: configure-cloud-routes=true\n"), nil,
			"functionConfig ConfigMap opts: --configure-cloud-routes=true: the CCM's route controller then writes pod CIDR routes into the VPC's route tables; only clusters whose pod network relies on cloud routes want that (strict: warnings are errors)",
			&resourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: "opts"}},
		{"a workload of the wrong shape", "", []string{fnItems[0], badDS}, "item 2: DaemonSet kube-system/ccm: spec.template.spec.containers is a scalar, not a list",
			&resourceRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ccm", Namespace: "kube-system"}},
		{"K3s in migrate mode", cm("  distro: k3s\n  mode: migrate\n"), nil,
			"mode migrate: distro: k3s has no migrate mode: it is built without the in-tree cloud providers",
			&resourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: "opts"}},
		{"migrate: a CCM of another minor than the cluster", cm("  mode: migrate\n  kubeVersion: v1.25.16\n"), nil,
			"item 4: DaemonSet kube-system/ccm: the CCM (image registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.14) is 1.26 and the cluster (kubeVersion v1.25.16) 1.25: " +
				"a migration runs the CCM of the cluster's minor; pin the CCM release of the cluster's minor, v1.25.15 (with the upstream chart: --set image.tag=" + releases.Pin("v1.25.15") + "), or pass allowVersionSkew to render it anyway",
			&resourceRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ccm", Namespace: "kube-system"}},
		{"migrate: a CCM newer than any cluster that migrates", cm("  mode: migrate\n"), []string{fnItems[0], fnItems[1], fnItems[2], ccm135},
			"the CCM (image registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0) is 1.35, newer than any cluster that can migrate",
			&resourceRef{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ccm", Namespace: "kube-system"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			items := c.items
			if items == nil {
				items = fnItems
			}
			in := resourceList(t, items, c.fc)
			code, out, errOut := run(t, in, "fn")
			if code != ExitInput {
				t.Errorf("exit %d, want %d", code, ExitInput)
			}
			o := parseFnOutput(t, out)
			if len(o.results) != 1 || o.results[0].Severity != severityError {
				t.Fatalf("results %+v, want one error", o.results)
			}
			r := o.results[0]
			if !strings.Contains(r.Message, c.want) {
				t.Errorf("message %q lacks %q", r.Message, c.want)
			}
			if fmt.Sprint(r.ResourceRef) != fmt.Sprint(c.ref) {
				t.Errorf("resourceRef %+v, want %+v", r.ResourceRef, c.ref)
			}
			if errOut != "aws-ccm-renderer: "+r.Message+"\n" {
				t.Errorf("stderr %q, want the message on one line", errOut)
			}
			// The items go back as they came.
			sent := parseFnOutput(t, in)
			if len(o.items) != len(sent.items) {
				t.Fatalf("%d items, sent %d", len(o.items), len(sent.items))
			}
			for i := range o.items {
				if o.items[i].MustString() != sent.items[i].MustString() {
					t.Errorf("item %d changed:\n%s", i, o.items[i].MustString())
				}
			}
		})
	}
}

// TestFnNotAResourceList: input that is not a ResourceList gets one line on
// stderr and nothing on stdout.
func TestFnNotAResourceList(t *testing.T) {
	for name, c := range map[string]struct {
		in, want string
		args     []string
		code     int
	}{
		"a manifest stream": {in: strings.Join(fnItems, "\n---\n"), want: "stdin is not a KRM ResourceList", code: ExitInput},
		"a List":            {in: "apiVersion: v1\nkind: List\nitems: []\n", want: "stdin is not a KRM ResourceList", code: ExitInput},
		"empty input":       {in: "", want: "stdin is not a KRM ResourceList", code: ExitInput},
		"broken YAML":       {in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [\n", want: "reading the ResourceList: ", code: ExitInput},
		"a list as an item": {in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}\n- [1, 2]\n",
			want: "reading the ResourceList: item 2 is a list, not an object", code: ExitInput},
		"a scalar as an item": {in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- plain\n",
			want: "reading the ResourceList: item 1 is a scalar, not an object", code: ExitInput},
		"an argument": {in: "", args: []string{"extra"}, want: `unknown command "extra"`, code: ExitUsage},
		"a flag":      {in: "", args: []string{"--distro=rke"}, want: "unknown flag: --distro", code: ExitUsage},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, c.in, append([]string{"fn"}, c.args...)...)
			if code != c.code || out != "" || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q (want %q)", code, c.code, out, errOut, c.want)
			}
		})
	}
}

func TestSplitList(t *testing.T) {
	got := splitList(" a=1, b=2\n c ,,\n")
	if strings.Join(got, "|") != "a=1|b=2|c" {
		t.Errorf("splitList = %q", got)
	}
}
