package testtools

// What rendered output means, for the integration tests of every front end:
// where the CCM's pods may run on the node fixtures, its flags and RBAC, and
// whether another front end's output means the same as the post-renderer's.

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/nodefit"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// FixtureDistros are the distributions with node fixtures in testdata/nodes:
// every one but auto (Fixtures fails for one without).
var FixtureDistros = distros.Values(distros.Named(distros.Records()))

func Fixtures(t *testing.T) map[string][]nodefit.Node {
	t.Helper()
	m := map[string][]nodefit.Node{}
	for _, d := range FixtureDistros {
		nodes, err := nodefit.LoadFixture(Root(), d)
		if err != nil {
			t.Fatal(err)
		}
		m[d] = nodes
	}
	return m
}

// HelmTemplate runs `helm template` on a chart, through the renderer when
// rendererArgs is not nil.
func HelmTemplate(t *testing.T, chart string, rendererArgs []string, extra ...string) []byte {
	t.Helper()
	args := []string{"template", "ccm", chart, "--namespace", "kube-system"}
	args = append(args, extra...)
	if rendererArgs != nil {
		args = append(args, "--post-renderer", Renderer(t))
		for _, a := range rendererArgs {
			args = append(args, "--post-renderer-args="+a)
		}
	}
	return MustRun(t, HelmEnv(t), Helm3(t), args...)
}

// CheckMeaning asserts what a rendered CCM release means: where its pods
// may run, its flags, its RBAC and its network.
func CheckMeaning(t *testing.T, objs []manifest.Object, nodes map[string][]nodefit.Node, distro distros.Distro, mode renderer.Mode) {
	t.Helper()
	ccm, err := manifest.CCM(objs)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := manifest.PodSpec(ccm)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range FixtureDistros {
		if distro != distros.Auto && string(distro) != d {
			continue
		}
		for _, n := range nodes[d] {
			ok, why := spec.Admits(n)
			if ok != n.ControlPlane() {
				t.Errorf("%s node %s (roles %v): admitted=%v (%s), want %v", d, n.Name, n.Roles, ok, why, n.ControlPlane())
			}
		}
	}
	for _, tol := range spec.Tolerations {
		if tol.Key == "" {
			t.Errorf("a key-less toleration: %+v", tol)
		}
	}
	if hn, _ := manifest.Get(ccm.Doc, "spec", "template", "spec", "hostNetwork").(bool); !hn {
		t.Error("hostNetwork is not true")
	}
	args := manifest.Args(ccm)
	for flag, want := range map[string]string{"cloud-provider": "aws", "use-service-account-credentials": "true", "configure-cloud-routes": "false", "v": "2"} {
		if got, ok := manifest.Flag(args, flag); !ok || got != want {
			t.Errorf("--%s = %q (present %v), want %q; args %q", flag, got, ok, want, args)
		}
	}
	lm, lmOK := manifest.Flag(args, "enable-leader-migration")
	cfg, cfgOK := manifest.Flag(args, "leader-migration-config")
	if mode == renderer.ModeMigrate {
		if lm != "true" || cfg != renderer.LeaderMigrationConfigPath {
			t.Errorf("migrate: --enable-leader-migration=%q --leader-migration-config=%q", lm, cfg)
		}
	} else if lmOK || cfgOK {
		t.Errorf("install: leader migration flags in %q", args)
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--") && !strings.Contains(a, "=") {
			t.Errorf("flag %q is not written as --flag=value", a)
		}
	}
	sa, _ := manifest.Get(ccm.Doc, "spec", "template", "spec", "serviceAccountName").(string)
	for _, p := range renderer.CCMServiceAccountPermissions {
		if !manifest.Grants(objs, ccm.Namespace, sa, p.Resource, p.Verb) {
			t.Errorf("service account %s may not %s %s", sa, p.Verb, p.Resource)
		}
	}
	if manifest.Grants(objs, ccm.Namespace, sa, "serviceaccounts", "delete") || manifest.Grants(objs, ccm.Namespace, sa, "secrets", "get") {
		t.Error("the RBAC Grants more than it should")
	}
	cms := 0
	for _, o := range objs {
		if o.Kind == "ConfigMap" && o.Name == renderer.LeaderMigrationConfigMapName(ccm.Name) {
			cms++
			data, _ := manifest.Get(o.Doc, "data", renderer.LeaderMigrationFile).(string)
			if !strings.Contains(data, "kind: LeaderMigrationConfiguration") || !strings.Contains(data, "service-lb-controller") {
				t.Errorf("leader migration config: %q", data)
			}
		}
	}
	if want := map[renderer.Mode]int{renderer.ModeMigrate: 1, renderer.ModeInstall: 0}[mode]; cms != want {
		t.Errorf("%d leader migration ConfigMaps, want %d", cms, want)
	}
}

func WriteFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Generated reports whether the renderer generated an object.
func Generated(o manifest.Object) bool {
	mark, _ := manifest.Get(o.Doc, "metadata", "annotations", renderer.GeneratedAnnotation).(string)
	return mark != ""
}

// MigrationVersionWarning is what the renderer says in migrate mode about
// a CCM newer than any cluster that can migrate (the charts' defaults from
// 0.0.8 on) when the cluster's version is not given: it refuses it, or
// warns with --allow-version-skew.
const MigrationVersionWarning = "newer than any cluster that can migrate"

// CheckStderr checks what the renderer printed on stderr: nothing, but in
// migrate mode the warning about the CCM's version that
// --allow-version-skew leaves.
func CheckStderr(t *testing.T, stderr string, mode renderer.Mode) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	switch {
	case stderr == "":
	case mode == renderer.ModeMigrate && len(lines) == 1 && strings.Contains(lines[0], MigrationVersionWarning):
	default:
		t.Errorf("stderr: %s", stderr)
	}
}

// Must drops the reason of a (bool, reason) result, for conditions that
// only need the bool.
func Must(ok bool, _ string) bool { return ok }

// Grants lists what a role grants as "group/resource verb", sorted.
func Grants(o manifest.Object) []string {
	var out []string
	rules, _ := o.Doc["rules"].([]any)
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		for _, g := range manifest.Strings(rule["apiGroups"]) {
			for _, res := range manifest.Strings(rule["resources"]) {
				for _, v := range manifest.Strings(rule["verbs"]) {
					out = append(out, g+"/"+res+" "+v)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// PostRendered is the post-renderer's output for a chart output, distro and
// mode.
func PostRendered(t *testing.T, chartOutput []byte, distro distros.Distro, mode renderer.Mode) []manifest.Object {
	t.Helper()
	o := renderer.DefaultOptions()
	o.Distro, o.Mode = distro, mode
	return PostRenderedWith(t, chartOutput, o)
}

// PostRenderedWith is the post-renderer's output for a chart output with
// the options given.
func PostRenderedWith(t *testing.T, chartOutput []byte, o renderer.Options) []manifest.Object {
	t.Helper()
	r, err := renderer.New(o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Render(chartOutput)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Split(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// sameAsRenderer: an overlay's output means what the post-renderer's output
// means. The same objects; the same nodes of every fixture admitted; the
// same tolerations (but extra) and args, as sets (kustomize and the
// renderer order them their own way); the same RBAC grants, however the
// rules are cut; everything else equal field by field.
func SameAsRenderer(t *testing.T, got, want []manifest.Object, nodes map[string][]nodefit.Node, extra ...nodefit.Toleration) {
	t.Helper()
	for _, pair := range Paired(t, got, want) {
		g, w := pair[0], pair[1]
		gd, wd := normalized(g), normalized(w)
		switch g.Kind {
		case "DaemonSet":
			sameWorkload(t, g, w, nodes, extra)
			// Compared above; and a strategic merge puts the patch's
			// volumes and mounts first, the renderer appends them: their
			// order means nothing.
			for _, doc := range []map[string]any{gd, wd} {
				pod := manifest.Get(doc, "spec", "template", "spec").(map[string]any)
				delete(pod, "tolerations")
				sortByName(pod["volumes"])
				for _, c := range pod["containers"].([]any) {
					delete(c.(map[string]any), "args")
					sortByName(c.(map[string]any)["volumeMounts"])
				}
			}
		case "ClusterRole", "Role":
			if gr, wr := roleGrants(g), roleGrants(w); !slices.Equal(gr, wr) {
				t.Errorf("%s Grants %q, the post-renderer's %q", g.ID(), gr, wr)
			}
			delete(gd, "rules")
			delete(wd, "rules")
		}
		if !reflect.DeepEqual(gd, wd) {
			gj, _ := json.MarshalIndent(gd, "", "  ")
			wj, _ := json.MarshalIndent(wd, "", "  ")
			t.Errorf("%s differs:\n%s\nthe post-renderer's:\n%s", g.ID(), gj, wj)
		}
	}
}

func KrustyRun(fs filesys.FileSystem, dir string) ([]byte, error) {
	k := krusty.MakeKustomizer(&krusty.Options{LoadRestrictions: kustypes.LoadRestrictionsRootOnly, PluginConfig: kustypes.DisabledPluginConfig()})
	res, err := k.Run(fs, dir)
	if err != nil {
		return nil, err
	}
	return res.AsYaml()
}

// checkUntouchedData: every object the renderer does not patch comes out
// with the same content (Helm 4 and kustomize re-serialise, and kustomize
// reorders, what they get back).
func CheckUntouchedData(t *testing.T, plain, out []manifest.Object) {
	t.Helper()
	keep := func(objs []manifest.Object) map[string]manifest.Object {
		kept := map[string]manifest.Object{}
		for _, o := range objs {
			if o.Kind != "DaemonSet" && o.Kind != "ClusterRole" && !Generated(o) {
				kept[o.ID()] = o
			}
		}
		return kept
	}
	a, b := keep(plain), keep(out)
	if len(a) != len(b) {
		t.Errorf("%d untouched objects, want %d", len(b), len(a))
	}
	for id, o := range a {
		if got, ok := b[id]; !ok {
			t.Errorf("%s is missing", id)
		} else if !reflect.DeepEqual(o.Doc, got.Doc) {
			t.Errorf("%s changed:\n%s\nvs\n%s", id, o.Raw, got.Raw)
		}
	}
}

// sameWorkload compares placement, tolerations and args.
func sameWorkload(t *testing.T, got, want manifest.Object, nodes map[string][]nodefit.Node, extra []nodefit.Toleration) {
	t.Helper()
	gs, err := manifest.PodSpec(got)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := manifest.PodSpec(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range slices.Sorted(maps.Keys(nodes)) {
		for _, n := range nodes[d] {
			g, why := gs.Admits(n)
			if w, wwhy := ws.Admits(n); g != w {
				t.Errorf("%s node %s: admitted %v (%s), by the post-renderer's output %v (%s)", d, n.Name, g, why, w, wwhy)
			}
		}
	}
	key := func(tol nodefit.Toleration) string { return fmt.Sprintf("%+v", tol) }
	if g, w := sortedBy(gs.Tolerations, key), sortedBy(append(ws.Tolerations, extra...), key); !slices.Equal(g, w) {
		t.Errorf("tolerations %q, the post-renderer's %q", g, w)
	}
	ga, wa := manifest.Args(got), manifest.Args(want)
	if g, w := sortedBy(ga, nil), sortedBy(wa, nil); !slices.Equal(g, w) {
		t.Errorf("args %q, the post-renderer's %q", ga, wa)
	}
	if len(slices.Compact(sortedBy(ga, nil))) != len(ga) {
		t.Errorf("args repeat a flag: %q", ga)
	}
}

// normalized is an object as JSON values, without what differs between two
// writers of the same object: empty maps and lists (kustomize keeps an
// emptied nodeSelector, the renderer drops it) and null fields.
func normalized(o manifest.Object) map[string]any {
	b, err := json.Marshal(o.Doc)
	if err != nil {
		panic(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(err)
	}
	prune(doc)
	return doc
}

func prune(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if prune(e) {
				delete(x, k)
			}
		}
		return len(x) == 0
	case []any:
		for _, e := range x {
			prune(e)
		}
		return len(x) == 0
	case nil:
		return true
	}
	return false
}

// roleGrants lists what a role grants, one "groups resources names verb"
// line per verb, sorted and without repeats: rules cut differently that
// grant the same compare equal.
func roleGrants(o manifest.Object) []string {
	var out []string
	rules, _ := o.Doc["rules"].([]any)
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		for _, g := range manifest.Strings(rule["apiGroups"]) {
			for _, res := range manifest.Strings(rule["resources"]) {
				for _, v := range manifest.Strings(rule["verbs"]) {
					out = append(out, fmt.Sprintf("%q %s %v %s", g, res, manifest.Strings(rule["resourceNames"]), v))
				}
			}
		}
		for _, u := range manifest.Strings(rule["nonResourceURLs"]) {
			for _, v := range manifest.Strings(rule["verbs"]) {
				out = append(out, u+" "+v)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sortByName sorts a list of named items in place.
func sortByName(v any) {
	list, _ := v.([]any)
	slices.SortStableFunc(list, func(a, b any) int {
		an, _ := a.(map[string]any)["name"].(string)
		bn, _ := b.(map[string]any)["name"].(string)
		return strings.Compare(an, bn)
	})
}

// sortedBy returns a sorted copy of a list, as strings.
func sortedBy[T any](list []T, key func(T) string) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		if key == nil {
			out = append(out, fmt.Sprint(x))
		} else {
			out = append(out, key(x))
		}
	}
	slices.Sort(out)
	return out
}

func SamePodSpec(t *testing.T, got, want manifest.Object, nodes map[string][]nodefit.Node, distro string) {
	t.Helper()
	gs, err := manifest.PodSpec(got)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := manifest.PodSpec(want)
	if err != nil {
		t.Fatal(err)
	}
	for d, ns := range nodes {
		for _, n := range ns {
			if g, _ := gs.Admits(n); g != Must(ws.Admits(n)) {
				t.Errorf("%s node %s: admitted %v, by the post-renderer's %v", d, n.Name, g, !g)
			}
			if d != distro {
				continue
			}
			gt, wt := nodefit.PodSpec{Tolerations: gs.Tolerations}, nodefit.PodSpec{Tolerations: ws.Tolerations}
			if g, _ := gt.Admits(n); g != Must(wt.Admits(n)) {
				t.Errorf("%s node %s: its taints tolerated %v, by the post-renderer's %v", d, n.Name, g, !g)
			}
		}
	}
	// The rest of the DaemonSet is the same, tolerations in order included,
	// but for the options the renderer records on the workload's metadata:
	// the upstream chart has no value for them.
	strip := func(o manifest.Object) map[string]any {
		b, _ := json.Marshal(o.Doc)
		var c map[string]any
		_ = json.Unmarshal(b, &c)
		if a, ok := manifest.Get(c, "metadata", "annotations").(map[string]any); ok {
			delete(a, renderer.OptionsAnnotation)
			if len(a) == 0 {
				delete(manifest.Get(c, "metadata").(map[string]any), "annotations")
			}
		}
		return c
	}
	if g, w := strip(got), strip(want); !reflect.DeepEqual(g, w) {
		gj, _ := json.MarshalIndent(g, "", "  ")
		wj, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("%s differs:\n%s\nthe post-renderer's:\n%s", got.ID(), gj, wj)
	}
}

// Paired asserts that got and want hold the same objects (by kind,
// namespace and name) and returns each object of got with want's of the
// same identity.
func Paired(t *testing.T, got, want []manifest.Object) [][2]manifest.Object {
	t.Helper()
	ids := func(objs []manifest.Object) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.ID())
		}
		slices.Sort(out)
		return out
	}
	if g, w := ids(got), ids(want); !slices.Equal(g, w) {
		t.Fatalf("objects %q, the post-renderer's %q", g, w)
	}
	byID := map[string]manifest.Object{}
	for _, o := range want {
		byID[o.ID()] = o
	}
	var pairs [][2]manifest.Object
	for _, g := range got {
		pairs = append(pairs, [2]manifest.Object{g, byID[g.ID()]})
	}
	return pairs
}

// RiskWarning is the renderer's warning about --set-arg=configure-cloud-routes=true.
const RiskWarning = "aws-ccm-renderer: warning: --configure-cloud-routes=true: the CCM's route controller then writes pod CIDR routes into the VPC's route tables; only clusters whose pod network relies on cloud routes want that"
