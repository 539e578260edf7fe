package renderer

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/ccmtest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// The safety classes: inputs as GitOps pipelines, umbrella charts and
// re-runs produce them. Each test is a table: input YAML and options, then
// what the output must be, or the error it must give (with no output).

// The CCM release the safety tests vary: the shared fixture with its
// account, on control-plane nodes, at a CCM of the last minor that can
// migrate.
var (
	safetyCCM = ccmtest.Options{Image: ccmtest.ImageTag("v1.26.1"), Args: []string{"--v=2", "--cloud-provider=aws"}, ControlPlane: true, Account: true}
	ccmDocs   = ccmtest.Docs(safetyCCM)

	saDoc, roleDoc, bindDoc, dsDoc = ccmDocs[0], ccmDocs[1], ccmDocs[2], ccmDocs[3]
)

// dsWithImage is dsDoc running another image.
func dsWithImage(image string) string {
	o := safetyCCM
	o.Image = image
	return ccmtest.DaemonSet(o)
}

const (
	caDoc = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cluster-autoscaler\n  namespace: kube-system\nspec:\n  template:\n    spec:\n      containers:\n      - name: cluster-autoscaler\n        image: registry.k8s.io/autoscaling/cluster-autoscaler:v1.26.2\n        command: [./cluster-autoscaler, --cloud-provider=aws, --v=4]\n"
)

// docs joins documents with separators.
func docs(ds ...string) string { return "---\n" + strings.Join(ds, "---\n") }

// list wraps documents as the items of a list of a kind (List,
// ClusterRoleBindingList).
func list(kind string, ds ...string) string {
	out := "apiVersion: v1\nkind: " + kind + "\nitems:\n"
	for _, d := range ds {
		out += "- " + strings.ReplaceAll(strings.TrimSuffix(d, "\n"), "\n", "\n  ") + "\n"
	}
	return out
}

// renderCase renders in with options changed by opts; it returns the output,
// the warnings and the error, and checks that an error comes with no output.
func renderCase(t *testing.T, in string, opts func(*Options)) ([]byte, []string, error) {
	t.Helper()
	o := DefaultOptions()
	o.Distro = distros.RKE2
	if opts != nil {
		opts(&o)
	}
	r, err := New(o)
	if err != nil {
		return nil, nil, err
	}
	out, err := r.Render([]byte(in))
	if err != nil {
		if out != nil {
			t.Fatal("an error came with output")
		}
		return nil, nil, err
	}
	return out.Bytes(), out.Warnings, nil
}

// objects parses a rendered stream into its objects, failing on a document
// that is not one (a merged pair would parse, so kinds are checked too).
func objects(t *testing.T, out []byte) []*yaml.RNode {
	t.Helper()
	var objs []*yaml.RNode
	for _, d := range stream.Split([][]byte{out}) {
		text, err := d.Content()
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		n, err := yaml.Parse(string(text))
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		objs = append(objs, n)
	}
	return objs
}

func ids(objs []*yaml.RNode) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func find(objs []*yaml.RNode, kind, name string) *yaml.RNode {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func field(t *testing.T, n *yaml.RNode, path ...string) string {
	t.Helper()
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		return ""
	}
	return strings.TrimSpace(v.MustString())
}

type safetyCase struct {
	name    string
	opts    func(*Options)
	in      string
	check   func(t *testing.T, out []byte, objs []*yaml.RNode, warnings []string)
	wantErr []string // the error must contain each
}

func runSafetyCases(t *testing.T, cases []safetyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, warnings, err := renderCase(t, c.in, c.opts)
			if len(c.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error; output:\n%s", out)
				}
				if !IsInputError(err) && !IsUsageError(err) {
					t.Errorf("error %T is neither input nor usage error", err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("the error spans lines: %q", err)
				}
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, out, objects(t, out), warnings)
			// Every accepted output renders to itself again.
			again, _, err := renderCase(t, string(out), c.opts)
			if err != nil || !bytes.Equal(again, out) {
				t.Errorf("rendering the output again: %v\n%s\nvs\n%s", err, again, out)
			}
		})
	}
}

func migrate(o *Options) { o.Mode = ModeMigrate }

// TestStreamIntegrity (class 1): a generated or removed document never
// changes how its neighbours split.
func TestStreamIntegrity(t *testing.T) {
	wantKinds := func(kinds ...string) func(*testing.T, []byte, []*yaml.RNode, []string) {
		return func(t *testing.T, out []byte, objs []*yaml.RNode, _ []string) {
			t.Helper()
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind())
			}
			if !slices.Equal(got, kinds) {
				t.Errorf("kinds %q, want %q:\n%s", got, kinds, out)
			}
		}
	}
	migrated := wantKinds("ConfigMap", "Role", "RoleBinding", "DaemonSet", "ServiceAccount", "ClusterRole", "ClusterRoleBinding")
	body := dsDoc + "---\n" + saDoc + "---\n" + roleDoc + "---\n" + bindDoc
	runSafetyCases(t, []safetyCase{
		{name: "the workload first, no leading separator", opts: migrate, in: body, check: migrated},
		{name: "leading comments", opts: migrate, in: "# rendered by hand\n# for prod\n" + body, check: migrated},
		{name: "CRLF line endings", opts: migrate, in: strings.ReplaceAll(body, "\n", "\r\n"), check: migrated},
		{name: "no final line break", opts: migrate, in: strings.TrimSuffix(body, "\n"), check: migrated},
		{name: "a separator line at the very end", opts: migrate, in: body + "---\n", check: migrated},
		{name: "install over a migrate render removes the generated documents, neighbours intact",
			in: func() string {
				out, _, err := renderCase(t, body, migrate)
				if err != nil {
					t.Fatal(err)
				}
				return string(out)
			}(),
			check: wantKinds("DaemonSet", "ServiceAccount", "ClusterRole", "ClusterRoleBinding")},
	})
}

// TestDuplicateKeys (class 2): Kubernetes reads the last of duplicate keys;
// a document the renderer reads or patches with one is refused.
func TestDuplicateKeys(t *testing.T) {
	runSafetyCases(t, []safetyCase{
		{name: "two nodeSelector keys in the workload",
			in:      docs(strings.Replace(dsDoc, "      nodeSelector:", "      nodeSelector: {a: b}\n      nodeSelector:", 1)),
			wantErr: []string{"document 1 (line 1)", "DaemonSet kube-system/ccm", `duplicate key "nodeSelector" in spec.template.spec at line 12 (first at line 11)`}},
		{name: "two subjects keys in a binding of the CCM's account",
			in:      docs(saDoc, roleDoc, strings.Replace(bindDoc, "subjects:", "subjects:\n- kind: Group\n  name: system:authenticated\nsubjects:", 1), dsDoc),
			wantErr: []string{"ClusterRoleBinding ccm", `duplicate key "subjects"`}},
		{name: "a document nobody patches may have them: passed through",
			in: docs(dsDoc, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: 1\n  a: 2\n"),
			check: func(t *testing.T, out []byte, _ []*yaml.RNode, _ []string) {
				if !bytes.Contains(out, []byte("  a: 1\n  a: 2\n")) {
					t.Errorf("the ConfigMap changed:\n%s", out)
				}
			}},
	})
}

// TestWhichWorkload (class 3): the CCM is what runs its executable or image,
// not what takes --cloud-provider=aws.
func TestWhichWorkload(t *testing.T) {
	mirrored := dsWithImage("harbor.corp.example:8443/mirror/" + ccmtest.ImageTag("v1.26.1"))
	own := strings.Replace(dsDoc, "image: registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.1", "image: corp.example/ccm:26\n        command: [/usr/local/bin/aws-cloud-controller-manager]", 1)
	unusual := dsWithImage("corp.example/cloud/ccm-build:v1.26.1")
	patched := func(t *testing.T, _ []byte, objs []*yaml.RNode, _ []string) {
		t.Helper()
		if got := field(t, find(objs, "DaemonSet", "ccm"), "spec", "template", "spec", "hostNetwork"); got != "true" {
			t.Errorf("the CCM was not patched")
		}
	}
	runSafetyCases(t, []safetyCase{
		{name: "cluster-autoscaler beside the CCM is left alone", in: docs(dsDoc, caDoc),
			check: func(t *testing.T, out []byte, objs []*yaml.RNode, _ []string) {
				patched(t, out, objs, nil)
				if !bytes.Contains(out, []byte(caDoc)) {
					t.Errorf("cluster-autoscaler changed:\n%s", out)
				}
			}},
		{name: "cluster-autoscaler alone is not taken for the CCM", in: docs(caDoc),
			wantErr: []string{"no AWS cloud-controller-manager DaemonSet or Deployment among the 1 objects", "--target=KIND/NAMESPACE/NAME"}},
		{name: "a mirror in a private registry", in: docs(mirrored), check: patched},
		{name: "a build of one's own, by its executable", in: docs(own), check: patched},
		{name: "an unusual build is named with --target", in: docs(unusual, caDoc), opts: func(o *Options) { o.Target = "DaemonSet/kube-system/ccm" }, check: patched},
		{name: "--target naming nothing", in: docs(dsDoc), opts: func(o *Options) { o.Target = "Deployment/kube-system/ccm" },
			wantErr: []string{"no Deployment/kube-system/ccm matches --target=Deployment/kube-system/ccm among the 1 workloads"}},
		{name: "the CCM as an item of a List", in: docs(list("List", dsDoc)),
			wantErr: []string{"document 1 (line 1): ", "the CCM's DaemonSet is an item of the List", "a document of its own"}},
		{name: "a second CCM in a List: named, not guessed", in: docs(dsDoc, list("DaemonSetList", strings.Replace(dsDoc, "name: ccm\n  namespace: kube-system", "name: ccm-b\n  namespace: kube-system", 1))),
			wantErr: []string{"2 workloads could be the CCM: DaemonSet kube-system/ccm (document 1 (line 1)), DaemonSet kube-system/ccm-b (document 2 (line 17))"}},
		{name: "a second CCM whose image is spelled with an escape", in: docs(dsDoc, strings.Replace(strings.Replace(dsDoc, "name: ccm\n  namespace: kube-system", "name: ccm-b\n  namespace: kube-system", 1),
			"image: registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.1", `image: "registry.k8s.io/provider-aws/cloud-controller\x2Dmanager:v1.26.1"`, 1)),
			wantErr: []string{"2 workloads could be the CCM"}},
		{name: "two CCMs: named, not guessed", in: docs(dsDoc, strings.Replace(dsDoc, "name: ccm\n  namespace: kube-system", "name: ccm-b\n  namespace: kube-system", 1)),
			wantErr: []string{"2 workloads could be the CCM: DaemonSet kube-system/ccm (document 1 (line 1)), DaemonSet kube-system/ccm-b (document 2 (line 17))", "--target"}},
		{name: "--target picks one of two", in: docs(dsDoc, strings.Replace(dsDoc, "name: ccm\n", "name: ccm-b\n", 1)),
			opts: func(o *Options) { o.Target = "DaemonSet/kube-system/ccm-b" },
			check: func(t *testing.T, _ []byte, objs []*yaml.RNode, _ []string) {
				if field(t, find(objs, "DaemonSet", "ccm"), "spec", "template", "spec", "hostNetwork") != "" ||
					field(t, find(objs, "DaemonSet", "ccm-b"), "spec", "template", "spec", "hostNetwork") != "true" {
					t.Error("not the targeted workload patched")
				}
			}},
		{name: "a CCM workload without a name", in: docs(strings.Replace(dsDoc, "  name: ccm\n  namespace", "  namespace", 1)),
			wantErr: []string{"the CCM's DaemonSet has no metadata.name"}},
	})
}

// TestSharedRoles (class 4): a role bound to anyone but the CCM's service
// account is never widened.
func TestSharedRoles(t *testing.T) {
	toAll := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: everyone\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: ccm\nsubjects:\n- kind: Group\n  name: system:authenticated\n"
	dedicated := accountRBACName(serviceAccount{namespace: "kube-system", name: "ccm"})
	roleKept := func(t *testing.T, out []byte, objs []*yaml.RNode, warnings []string) {
		t.Helper()
		if !bytes.Contains(out, []byte(roleDoc)) {
			t.Errorf("the shared ClusterRole changed:\n%s", out)
		}
		role := find(objs, "Role", dedicated)
		bind := find(objs, "RoleBinding", dedicated)
		if role == nil || bind == nil {
			t.Fatalf("no dedicated Role and RoleBinding: %q", ids(objs))
		}
		if role.GetNamespace() != "kube-system" || bind.GetNamespace() != "kube-system" || find(objs, "ClusterRole", dedicated) != nil || find(objs, "ClusterRoleBinding", dedicated) != nil {
			t.Errorf("the dedicated RBAC is not a Role and RoleBinding in kube-system alone: %q", ids(objs))
		}
		if got := field(t, role, "rules"); !strings.Contains(got, "get") || strings.Contains(got, "create") {
			t.Errorf("the dedicated role grants %s, want only what is missing (get serviceaccounts)", got)
		}
		if got := field(t, bind, "subjects"); !strings.Contains(got, "name: ccm") || strings.Count(got, "kind:") != 1 {
			t.Errorf("the dedicated binding binds %s", got)
		}
		if len(warnings) == 0 || !strings.Contains(warnings[0], "also bound to Group system:authenticated (ClusterRoleBinding everyone)") {
			t.Errorf("warnings %q", warnings)
		}
	}
	aggregated := strings.Replace(roleDoc, "  name: ccm\n", "  name: ccm\n  labels:\n    rbac.authorization.k8s.io/aggregate-to-edit: \"true\"\n", 1)
	aggregatedKept := func(why string) func(*testing.T, []byte, []*yaml.RNode, []string) {
		return func(t *testing.T, out []byte, objs []*yaml.RNode, warnings []string) {
			t.Helper()
			if strings.Contains(field(t, find(objs, "ClusterRole", "ccm"), "rules"), "get") || find(objs, "Role", dedicated) == nil {
				t.Errorf("the aggregated role was widened, or no dedicated role:\n%s", out)
			}
			if len(warnings) == 0 || !strings.Contains(warnings[0], "ClusterRole ccm "+why) {
				t.Errorf("warnings %q, want one saying the role %s", warnings, why)
			}
		}
	}
	runSafetyCases(t, []safetyCase{
		{name: "a ClusterRole also bound to system:authenticated", in: docs(saDoc, roleDoc, bindDoc, toAll, dsDoc), check: roleKept},
		{name: "the same, in another order", in: docs(toAll, dsDoc, bindDoc, roleDoc, saDoc), check: roleKept},
		{name: "the other binding names the role with an escape", in: docs(saDoc, roleDoc, bindDoc, strings.Replace(toAll, "  name: ccm\n", "  name: \"c\\x63m\"\n", 1), dsDoc), check: roleKept},
		{name: "the other binding is an item of a List", in: docs(saDoc, roleDoc, bindDoc, list("List", toAll), dsDoc), check: roleKept},
		{name: "the other binding is an item of a ClusterRoleBindingList", in: docs(saDoc, roleDoc, list("ClusterRoleBindingList", bindDoc, toAll), dsDoc), check: roleKept},
		{name: "a ClusterRole also bound to another service account in the same binding",
			in: docs(saDoc, roleDoc, bindDoc+"- kind: ServiceAccount\n  name: other\n  namespace: kube-system\n", dsDoc),
			check: func(t *testing.T, out []byte, objs []*yaml.RNode, _ []string) {
				if !bytes.Contains(out, []byte(roleDoc)) || find(objs, "Role", dedicated) == nil {
					t.Errorf("widened or no dedicated role:\n%s", out)
				}
			}},
		{name: "a ClusterRole aggregated into edit", in: docs(saDoc, aggregated, bindDoc, dsDoc), check: aggregatedKept("is aggregated into other roles (label rbac.authorization.k8s.io/aggregate-to-edit)")},
		{name: "a ClusterRole another one's aggregationRule selects",
			in: docs(saDoc, strings.Replace(roleDoc, "  name: ccm\n", "  name: ccm\n  labels:\n    team: cloud\n", 1), bindDoc, dsDoc,
				"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: cloud-team\naggregationRule:\n  clusterRoleSelectors:\n  - matchLabels:\n      team: cloud\nrules: []\n"),
			check: aggregatedKept("is aggregated into ClusterRole cloud-team")},
		{name: "a ClusterRole whose rules the aggregation controller writes",
			in:    docs(saDoc, strings.Replace(roleDoc, "rules:\n", "aggregationRule:\n  clusterRoleSelectors:\n  - matchLabels:\n      team: cloud\nrules:\n", 1), bindDoc, dsDoc),
			check: aggregatedKept("has an aggregationRule")},
		{name: "a CCM without a namespace: which account is its own is not guessed",
			in:      docs(saDoc, roleDoc, strings.Replace(bindDoc, "namespace: kube-system", "namespace: team-x", 1), strings.Replace(dsDoc, "  namespace: kube-system\n", "", 1)),
			wantErr: []string{"the CCM's DaemonSet has no metadata.namespace", "lacks get serviceaccounts", "give the workload its namespace"}},
		{name: "a CCM without a namespace whose role lacks nothing",
			in: docs(saDoc, strings.Replace(roleDoc, "verbs: [create]\n-", "verbs: [create, get]\n-", 1), bindDoc, strings.Replace(dsDoc, "  namespace: kube-system\n", "", 1)),
			check: func(t *testing.T, out []byte, objs []*yaml.RNode, _ []string) {
				if find(objs, "Role", dedicated) != nil || !bytes.Contains(out, []byte("verbs: [create, get]\n-")) {
					t.Errorf("RBAC changed:\n%s", out)
				}
			}},
		{name: "the CCM's own role is patched in place",
			in: docs(saDoc, roleDoc, bindDoc, dsDoc),
			check: func(t *testing.T, out []byte, objs []*yaml.RNode, _ []string) {
				if find(objs, "Role", dedicated) != nil || !strings.Contains(field(t, find(objs, "ClusterRole", "ccm"), "rules"), "verbs: [create, get]") {
					t.Errorf("not patched in place:\n%s", out)
				}
			}},
		{name: "a Role of the CCM's namespace and a shared ClusterRole: the Role takes it",
			in: docs(saDoc, roleDoc, toAll, bindDoc,
				"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: own\n  namespace: kube-system\nrules:\n- apiGroups: [\"\"]\n  resources: [serviceaccounts]\n  verbs: [create]\n",
				"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: own\n  namespace: kube-system\nroleRef:\n  kind: Role\n  name: own\nsubjects:\n- kind: ServiceAccount\n  name: ccm\n", dsDoc),
			check: func(t *testing.T, out []byte, objs []*yaml.RNode, _ []string) {
				if !bytes.Contains(out, []byte(roleDoc)) || find(objs, "Role", dedicated) != nil ||
					!strings.Contains(field(t, find(objs, "Role", "own"), "rules"), "verbs: [create, get]") {
					t.Errorf("want the Role patched, the shared ClusterRole untouched:\n%s", out)
				}
			}},
		{name: "a Role of another namespace cannot grant in kube-system",
			in: docs(saDoc,
				"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: own\n  namespace: apps\nrules: []\n",
				"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: own\n  namespace: apps\nroleRef:\n  kind: Role\n  name: own\nsubjects:\n- kind: ServiceAccount\n  name: ccm\n  namespace: kube-system\n", dsDoc),
			check: func(t *testing.T, out []byte, objs []*yaml.RNode, _ []string) {
				if find(objs, "Role", dedicated) == nil || field(t, find(objs, "Role", "own"), "rules") != "[]" {
					t.Errorf("want a dedicated ClusterRole:\n%s", out)
				}
			}},
		{name: "sharing ended: the dedicated role goes again",
			in: func() string {
				out, _, err := renderCase(t, docs(saDoc, roleDoc, bindDoc, toAll, dsDoc), nil)
				if err != nil {
					t.Fatal(err)
				}
				return strings.Replace(string(out), "system:authenticated", "system:nobody-but-ccm", 1) // still shared
			}(),
			check: func(t *testing.T, out []byte, objs []*yaml.RNode, _ []string) {
				if find(objs, "Role", dedicated) == nil {
					t.Errorf("still shared, yet no dedicated role:\n%s", out)
				}
			}},
	})
	// Once the other binding is gone, the role is the CCM's alone again:
	// rendering the earlier output patches it and drops the generated pair.
	first, _, err := renderCase(t, docs(saDoc, roleDoc, bindDoc, toAll, dsDoc), nil)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, d := range stream.Split([][]byte{first}) {
		if !bytes.Contains(d.Raw, []byte("name: everyone")) {
			kept = append(kept, string(d.Raw))
		}
	}
	out, _, err := renderCase(t, strings.Join(kept, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	direct, _, _ := renderCase(t, docs(saDoc, roleDoc, bindDoc, dsDoc), nil)
	if !bytes.Equal(out, direct) {
		t.Errorf("with the sharing binding gone:\n%s\nwant what the unshared input renders to:\n%s", out, direct)
	}
}

// TestFlagsInCommand (class 5): command after the executable and args are
// one command line.
func TestFlagsInCommand(t *testing.T) {
	inCommand := strings.Replace(dsDoc, "        args: [--v=2, --cloud-provider=aws]\n",
		"        command: [/bin/aws-cloud-controller-manager, --cloud-provider=aws, --enable-leader-migration=true, --allocate-node-cidrs=true]\n        args: [--v=2, --cloud-provider, aws]\n", 1)
	line := func(t *testing.T, objs []*yaml.RNode) string {
		t.Helper()
		c := find(objs, "DaemonSet", "ccm")
		return field(t, c, "spec", "template", "spec", "containers", "[name=ccm]", "command") + " " +
			field(t, c, "spec", "template", "spec", "containers", "[name=ccm]", "args")
	}
	runSafetyCases(t, []safetyCase{
		{name: "install mode removes leader migration from command; every flag once", in: docs(inCommand),
			check: func(t *testing.T, _ []byte, objs []*yaml.RNode, _ []string) {
				got := line(t, objs)
				if strings.Contains(got, "leader-migration") || strings.Count(got, "cloud-provider") != 1 {
					t.Errorf("command line %s", got)
				}
			}},
		{name: "--remove-arg removes a flag from command", in: docs(inCommand), opts: func(o *Options) { o.RemoveArgs = []string{"allocate-node-cidrs"} },
			check: func(t *testing.T, _ []byte, objs []*yaml.RNode, _ []string) {
				if got := line(t, objs); strings.Contains(got, "allocate-node-cidrs") {
					t.Errorf("command line %s", got)
				}
			}},
		{name: "an unusual build's flags in command: refused, not written twice",
			in:      docs(strings.Replace(inCommand, "/bin/aws-cloud-controller-manager", "/usr/local/bin/my-ccm", 1)),
			opts:    func(o *Options) { o.Target = "DaemonSet/kube-system/ccm" },
			wantErr: []string{`container "ccm": its command passes --cloud-provider to /usr/local/bin/my-ccm, which is not the AWS CCM's executable`, "move the CCM's flags to args"}},
		{name: "an unusual build's other words in command are its own",
			in:   docs(strings.Replace(inCommand, "[/bin/aws-cloud-controller-manager, --cloud-provider=aws, --enable-leader-migration=true, --allocate-node-cidrs=true]", "[/usr/local/bin/my-ccm, --config=/etc/ccm.conf]", 1)),
			opts: func(o *Options) { o.Target = "DaemonSet/kube-system/ccm" },
			check: func(t *testing.T, _ []byte, objs []*yaml.RNode, _ []string) {
				if got := line(t, objs); !strings.HasPrefix(got, "[/usr/local/bin/my-ccm, --config=/etc/ccm.conf] ") || strings.Count(got, "cloud-provider") != 1 {
					t.Errorf("command line %s", got)
				}
			}},
		{name: "migrate mode sets the flags once", in: docs(inCommand), opts: migrate,
			check: func(t *testing.T, _ []byte, objs []*yaml.RNode, _ []string) {
				got := line(t, objs)
				if strings.Count(got, "--enable-leader-migration=true") != 1 || strings.Count(got, "--leader-migration-config=") != 1 {
					t.Errorf("command line %s", got)
				}
			}},
	})
}

// TestNameCollisions (class 6): an object the renderer would generate is
// already in the input, and is not the renderer's.
func TestNameCollisions(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ccm-leader-migration\n  namespace: kube-system\ndata: {a: b}\n"
	role := "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: ccm-leader-migration\n  namespace: kube-system\nrules: []\n"
	runSafetyCases(t, []safetyCase{
		{name: "a user ConfigMap with the leader migration ConfigMap's name", opts: migrate, in: docs(cm, dsDoc),
			wantErr: []string{"document 1 (line 1): ConfigMap kube-system/ccm-leader-migration: the renderer generates an object of this kind and name (leader-migration-config)"}},
		{name: "a user Role with the lease Role's name", opts: migrate, in: docs(dsDoc, role),
			wantErr: []string{"document 2", "Role kube-system/ccm-leader-migration", "(leader-migration-rbac)"}},
		{name: "in install mode nothing is generated: no collision", in: docs(cm, dsDoc),
			check: func(t *testing.T, out []byte, _ []*yaml.RNode, _ []string) {
				if !bytes.Contains(out, []byte(cm)) {
					t.Errorf("the user's ConfigMap changed:\n%s", out)
				}
			}},
	})
}

// TestEmptyInput (class 7) lives in cmd/cli (a terminal versus /dev/null);
// here: empty input is an input error, never an empty output.
func TestEmptyInput(t *testing.T) {
	for _, in := range []string{"", "\n", "   \n\n", "---\n"} {
		r, _ := New(DefaultOptions())
		out, err := r.Render([]byte(in))
		if out != nil || !IsInputError(err) {
			t.Errorf("%q: output %v, error %v", in, out, err)
		}
	}
}

// TestRerenderConverges (class 8): rendering the renderer's output with
// other options gives what rendering the original with them gives, for
// every pair of these option sets.
func TestRerenderConverges(t *testing.T) {
	in := pinnedSample(t)
	sets := map[string]func(*Options){}
	for _, d := range distros.All {
		for _, m := range ModesOf(mustProfile(d)) {
			sets[string(d)+"/"+string(m)] = func(o *Options) { o.Distro, o.Mode = d, m }
		}
	}
	sets["rke2/flags"] = func(o *Options) {
		o.Distro, o.SetArgs, o.RemoveArgs = distros.RKE2, []string{"v=5", "cluster-name=x"}, []string{"allocate-node-cidrs"}
	}
	sets["k3s/no-host-network"] = func(o *Options) { f := false; o.Distro, o.HostNetwork = distros.K3s, &f }
	sets["rke2/token-scope"] = func(o *Options) { o.Distro, o.TokenScope = distros.RKE2, TokenScopeControllers }
	sets["kubeadm/migrate/lease"] = func(o *Options) {
		o.Distro, o.Mode, o.LeaderName, o.KCMUser = distros.Kubeadm, ModeMigrate, "other-lease", "kcm"
	}
	for a, optsA := range sets {
		first, _, err := renderCase(t, string(in), optsA)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		for b, optsB := range sets {
			direct, _, err := renderCase(t, string(in), optsB)
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			again, _, err := renderCase(t, string(first), optsB)
			if err != nil {
				t.Fatalf("%s then %s: %v", a, b, err)
			}
			if !bytes.Equal(again, direct) {
				t.Errorf("%s then %s differs from %s alone:\n%s", a, b, b, diffLines(direct, again))
			}
		}
	}
}

// diffLines shows the lines of got that want lacks, and the other way.
func diffLines(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	var b strings.Builder
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	return b.String()
}

// TestOptionsValidated (class 9): names must be valid; unusual but
// legitimate flags warn rather than fail.
func TestOptionsValidated(t *testing.T) {
	runSafetyCases(t, []safetyCase{
		{name: "a lease name that is not a DNS-1123 subdomain", in: docs(dsDoc),
			opts:    func(o *Options) { o.Mode, o.LeaderName = ModeMigrate, "Cloud_Provider" },
			wantErr: []string{`--leader-name "Cloud_Provider" is not a valid Lease name`}},
		{name: "cloud routes for clusters that use them", in: docs(dsDoc),
			opts: func(o *Options) { o.SetArgs = []string{"configure-cloud-routes=true"} },
			check: func(t *testing.T, out []byte, _ []*yaml.RNode, warnings []string) {
				if !bytes.Contains(out, []byte("--configure-cloud-routes=true")) || len(warnings) == 0 || !strings.Contains(warnings[0], "route tables") {
					t.Errorf("warnings %q:\n%s", warnings, out)
				}
			}},
		{name: "another cloud provider is refused", in: docs(dsDoc),
			opts:    func(o *Options) { o.SetArgs = []string{"cloud-provider=external"} },
			wantErr: []string{"--set-arg cloud-provider: the CCM must run with --cloud-provider=aws"}},
		{name: "K3s has no migrate mode: the switch is explained", in: docs(dsDoc),
			opts: func(o *Options) { o.Distro, o.Mode = distros.K3s, ModeMigrate },
			wantErr: []string{"--mode migrate: --distro=k3s has no migrate mode", "built without the in-tree cloud providers",
				"a switch, step by step in `aws-ccm-renderer plan --distro k3s`", "render with --mode=install"}},
		// Advice only that the next command takes: no --set-arg for a
		// flag that allows no other value.
		{name: "removing the cloud provider is refused, without advice to set it", in: docs(dsDoc),
			opts:    func(o *Options) { o.RemoveArgs = []string{"cloud-provider"} },
			wantErr: []string{"--remove-arg cloud-provider: the CCM must run with --cloud-provider=aws, which the renderer sets; drop this option"}},
		{name: "removing cloud routes is refused, with the --set-arg that works", in: docs(dsDoc),
			opts:    func(o *Options) { o.RemoveArgs = []string{"configure-cloud-routes"} },
			wantErr: []string{"--remove-arg configure-cloud-routes: the renderer sets --configure-cloud-routes=false; to run the CCM with another value, use --set-arg=configure-cloud-routes=true"}},
	})
	// The advice of every refused --remove-arg is taken by the next render.
	for _, r := range requiredArgs {
		o := DefaultOptions()
		o.RemoveArgs = []string{r.name}
		_, err := New(o)
		if r.risk == "" {
			if strings.Contains(err.Error(), "--set-arg") {
				t.Errorf("--remove-arg=%s advises a --set-arg: %v", r.name, err)
			}
			continue
		}
		o.RemoveArgs, o.SetArgs = nil, []string{r.name + "=" + otherBool(r.value)}
		if _, err2 := New(o); err2 != nil {
			t.Errorf("--remove-arg=%s advises what is refused: %v, then %v", r.name, err, err2)
		}
	}
}
