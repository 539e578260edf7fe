// Package wrapperchart generates the values of the wrapper chart
// charts/aws-ccm-rancher from the renderer's profiles: a values preset per
// distribution and mode, the default values (rke2, install), and the
// expectations the chart's validation template checks. Helm gives a parent
// chart no way to compute a subchart's values from its own, so the choice of
// distribution is a choice of values file; the chart checks that the values
// in effect match its distro and mode values and says what to use if not.
package wrapperchart

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/overlays"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Subchart is the upstream chart's key in the wrapper chart's values.
const Subchart = "aws-cloud-controller-manager"

// Distros are the distributions the chart can serve: auto needs a node
// affinity, which the upstream chart has no value for.
var Distros = []renderer.Distro{renderer.DistroRKE, renderer.DistroRKE2, renderer.DistroK3s, renderer.DistroKubeadm}

// Default is the combination values.yaml holds.
const Default = "rke2-install"

type rule struct {
	APIGroups []string `yaml:"apiGroups"`
	Resources []string `yaml:"resources"`
	Verbs     []string `yaml:"verbs"`
}

// ClusterRoleRules is the CCM's ClusterRole as the chart's clusterRoleRules
// value: what the upstream chart grants (0.0.11, a superset of earlier
// versions), with get on serviceaccounts, which it lacks.
var ClusterRoleRules = func() []rule {
	rules := []rule{
		{[]string{""}, []string{"events"}, []string{"create", "patch", "update"}},
		{[]string{""}, []string{"nodes"}, []string{"*"}},
		{[]string{""}, []string{"nodes/status"}, []string{"patch"}},
		{[]string{""}, []string{"services"}, []string{"list", "patch", "update", "watch"}},
		{[]string{""}, []string{"services/status"}, []string{"list", "patch", "update", "watch"}},
		{[]string{""}, []string{"serviceaccounts"}, nil},
		{[]string{""}, []string{"persistentvolumes"}, []string{"get", "list", "update", "watch"}},
		{[]string{""}, []string{"endpoints"}, []string{"create", "get", "list", "watch", "update"}},
		{[]string{"coordination.k8s.io"}, []string{"leases"}, []string{"create", "get", "list", "watch", "update"}},
		{[]string{""}, []string{"serviceaccounts/token"}, nil},
		{[]string{"authentication.k8s.io"}, []string{"tokenreviews"}, []string{"create"}},
		{[]string{"authorization.k8s.io"}, []string{"subjectaccessreviews"}, []string{"create"}},
	}
	for _, p := range renderer.CCMServiceAccountPermissions {
		for i := range rules {
			if rules[i].Resources[0] == p.Resource && !slices.Contains(rules[i].Verbs, p.Verb) {
				rules[i].Verbs = append(rules[i].Verbs, p.Verb)
			}
		}
	}
	for i := range rules {
		if rules[i].Resources[0] == "serviceaccounts" {
			slices.Sort(rules[i].Verbs) // create, get
		}
	}
	return rules
}()

// preset is the subchart values for one distribution and mode, and the
// flags the renderer enforces there (the chart's other flags, such as --v,
// are the user's to change).
func preset(d renderer.Distro, m renderer.Mode) (map[string]any, []string, error) {
	o := renderer.DefaultOptions()
	o.Distro, o.Mode = d, m
	r, err := renderer.New(o)
	if err != nil {
		return nil, nil, err
	}
	p := r.Profile()
	// Null removes a key of the chart's default nodeSelector; Helm keeps a
	// null for a key the default lacks, so only the default key is nulled.
	sel := map[string]any{}
	if _, ok := p.NodeSelector[renderer.LabelControlPlane]; !ok {
		sel[renderer.LabelControlPlane] = nil
	}
	for k, v := range p.NodeSelector {
		sel[k] = v
	}
	v := map[string]any{
		"nodeSelector":     sel,
		"tolerations":      overlays.Tolerations(p),
		"args":             r.MergeArgs(overlays.ChartArgs),
		"hostNetworking":   true,
		"clusterRoleRules": ClusterRoleRules,
	}
	if r.RendersLeaderMigrationConfig() {
		v["extraVolumes"] = []any{map[string]any{"name": renderer.LeaderMigrationVolume,
			"configMap": map[string]any{"name": renderer.LeaderMigrationConfigMapName(overlays.ChartWorkload)}}}
		v["extraVolumeMounts"] = []any{map[string]any{"name": renderer.LeaderMigrationVolume,
			"mountPath": renderer.LeaderMigrationMountPath, "readOnly": true}}
	}
	return v, r.MergeArgs(nil), nil
}

// Files returns the generated files, by path relative to the chart.
func Files() (map[string][]byte, error) {
	files := map[string][]byte{}
	expect := map[string]any{}
	for _, d := range Distros {
		for _, m := range renderer.Modes {
			name := string(d) + "-" + string(m)
			p, enforced, err := preset(d, m)
			if err != nil {
				return nil, err
			}
			values := map[string]any{"distro": string(d), "mode": string(m), Subchart: p}
			b, err := yaml.Marshal(values)
			if err != nil {
				return nil, err
			}
			files["presets/"+name+".yaml"] = append([]byte(presetHeader(d, m)), b...)
			if name == Default {
				files["values.yaml"] = defaultValues(b)
			}
			e := map[string]any{"nodeSelector": p["nodeSelector"], "tolerations": p["tolerations"], "args": enforced}
			expect[name] = e
		}
	}
	b, err := yaml.Marshal(expect)
	if err != nil {
		return nil, err
	}
	files["templates/_presets.tpl"] = []byte(fmt.Sprintf("{{- /* Generated from aws-ccm-renderer's profiles (go test ./internal/wrapperchart -update): do not edit. */ -}}\n"+
		"{{- /* What each distro and mode needs in the upstream chart's values; templates/validate.yaml checks it. */ -}}\n"+
		"{{- define \"aws-ccm-rancher.presets\" -}}\n%s{{- end -}}\n", b))
	files["templates/leader-migration.yaml"] = []byte(leaderMigrationTemplate())
	return files, nil
}

func presetHeader(d renderer.Distro, m renderer.Mode) string {
	return fmt.Sprintf("# Values for distro=%s mode=%s, generated from aws-ccm-renderer's profiles: do not edit.\n"+
		"#   helm install aws-ccm charts/aws-ccm-rancher -n kube-system -f presets/%s-%s.yaml\n"+
		"# The upstream chart's values go under %s; lists here replace the chart's whole.\n", d, m, d, m, Subchart)
}

func defaultValues(preset []byte) []byte {
	var b strings.Builder
	b.WriteString("# Values of aws-ccm-rancher, generated from aws-ccm-renderer's profiles: do not edit;\n")
	b.WriteString("# the defaults are presets/" + Default + ".yaml.\n#\n")
	b.WriteString("# distro: rke, rke2, k3s or kubeadm (auto needs a node affinity, which the upstream\n")
	b.WriteString("#   chart has no value for). mode: install, or migrate during a move off the in-tree\n")
	b.WriteString("#   cloud provider. For another distro or mode, install with -f presets/<distro>-<mode>.yaml:\n")
	b.WriteString("#   a parent chart cannot compute its subchart's values, so the values below must match;\n")
	b.WriteString("#   templates/validate.yaml fails with what to change when they do not.\n")
	b.WriteString("# leaderName: the lease shared with the in-tree controller manager during a migration.\n")
	b.WriteString("# " + Subchart + ": the upstream chart's own values, passed through.\n")
	b.WriteString("leaderName: " + renderer.DefaultLeaderName + "\n")
	b.Write(preset)
	return []byte(b.String())
}

// leaderMigrationTemplate renders the leader migration ConfigMap in migrate
// mode, named after the upstream chart's workload.
func leaderMigrationTemplate() string {
	cfg := renderer.LeaderMigrationConfiguration("LEADER")
	cfg = strings.Replace(cfg, `leaderName: "LEADER"`, `leaderName: {{ .Values.leaderName | quote }}`, 1)
	var b strings.Builder
	b.WriteString("{{- /* Generated from aws-ccm-renderer (go test ./internal/wrapperchart -update): do not edit. */ -}}\n")
	b.WriteString("{{- if eq .Values.mode \"migrate\" }}\n")
	b.WriteString("{{- $ccm := index .Values \"" + Subchart + "\" }}\n")
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n")
	b.WriteString("  name: {{ printf \"%s-leader-migration\" $ccm.nameOverride | quote }}\n")
	b.WriteString("  namespace: {{ $ccm.namespace | quote }}\n")
	b.WriteString("  annotations:\n    " + renderer.GeneratedAnnotation + ": leader-migration-config\n")
	b.WriteString("data:\n  " + renderer.LeaderMigrationFile + ": |\n")
	for _, line := range strings.SplitAfter(cfg, "\n") {
		if line != "" {
			b.WriteString("    " + line)
		}
	}
	b.WriteString("{{- end }}\n")
	return b.String()
}

// Names lists the generated files in order.
func Names(files map[string][]byte) []string { return slices.Sorted(maps.Keys(files)) }
