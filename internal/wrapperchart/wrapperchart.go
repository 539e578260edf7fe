// Package wrapperchart generates the values of the wrapper chart
// charts/aws-ccm-rancher from what the renderer makes of the upstream chart's
// defaults (package upstream): a values preset per distribution and mode, the
// default values (rke2, install), the expectations the chart's validation
// template checks, the objects the renderer adds in migrate mode, as a
// template, and from the distributions' records the distributions the
// validation accepts and the Rancher form (questions.yaml). Helm gives a parent
// chart no way to compute a subchart's values from its own, so the choice of
// distribution is a choice of values file; the chart checks that the values
// in effect match its distro and mode values and says what to use if not.
package wrapperchart

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Subchart is the upstream chart's key in the wrapper chart's values.
const Subchart = "aws-cloud-controller-manager"

// Distros are the distributions the chart can serve: those placed by a
// nodeSelector (auto needs a node affinity, which the upstream chart has
// no value for).
var Distros = func() []distros.Distro {
	var ds []distros.Distro
	for _, p := range Records(distros.Records()) {
		ds = append(ds, p.Distro)
	}
	return ds
}()

// Records are the records of the distributions the chart can serve.
func Records(recs []distros.Record) []distros.Record {
	return slices.DeleteFunc(slices.Clone(recs), func(p distros.Record) bool { return p.NodeSelector == nil })
}

// Default is the combination values.yaml holds.
const Default = "rke2-install"

// preset is the subchart values for one distribution and mode, and the
// flags the renderer enforces there (the chart's other flags, such as --v,
// are the user's to change).
func preset(d distros.Distro, m renderer.Mode) (map[string]any, []string, error) {
	o := renderer.DefaultOptions()
	o.Distro, o.Mode = d, m
	tag := pinnedTag(m)
	r, err := upstream.RenderTag(o, tag)
	if err != nil {
		return nil, nil, err
	}
	// Null removes a key of the chart's default nodeSelector; Helm keeps a
	// null for a key the default lacks, so only default keys are nulled.
	sel := map[string]any{}
	for _, k := range r.RemovedSelectorKeys() {
		sel[k] = nil
	}
	v := map[string]any{"nodeSelector": sel}
	for value, node := range map[string]*yaml.RNode{
		"tolerations": r.PodSpec("tolerations"), "args": r.Container("args"),
		"extraVolumes": r.PodSpec("volumes"), "extraVolumeMounts": r.Container("volumeMounts"),
	} {
		if node != nil {
			var x any
			if err := node.YNode().Decode(&x); err != nil {
				return nil, nil, err
			}
			v[value] = x
		}
	}
	if s := r.PodSpec("nodeSelector"); s != nil {
		var rendered map[string]any
		if err := s.YNode().Decode(&rendered); err != nil {
			return nil, nil, err
		}
		maps.Copy(sel, rendered)
	}
	v["hostNetworking"] = r.PodSpec("hostNetwork") != nil
	var rules any
	if err := r.ClusterRole.Field("rules").Value.YNode().Decode(&rules); err != nil {
		return nil, nil, err
	}
	v["clusterRoleRules"] = rules
	if tag != "" {
		v["image"] = map[string]any{"tag": tag}
	}
	enforced, err := upstream.EnforcedArgs(o, tag)
	return v, enforced, err
}

// pinnedTag is the CCM image tag a preset of the mode pins: in migrate
// mode the release of the last minor with the in-tree provider, the
// cluster a migration runs on (the chart refuses another minor than the
// cluster's); none in install mode, which keeps the upstream chart's.
func pinnedTag(m renderer.Mode) string {
	if m == renderer.ModeMigrate {
		return releases.Pin(releases.Tag(releases.LastInTreeMinor))
	}
	return ""
}

// upstreamTag is the CCM image tag the upstream chart of the wrapper
// chart's dependency deploys by default: what install mode runs unless
// the values set one.
func upstreamTag() string {
	tag, _ := releases.DefaultImageTag(upstream.LatestChartVersion)
	return tag
}

// minorOf is the Kubernetes minor of a CCM image tag ("v1.35.0" gives 35).
func minorOf(tag string) int {
	var minor int
	fmt.Sscanf(strings.TrimPrefix(tag, "v"), "1.%d.", &minor)
	return minor
}

// Files returns the generated files, by path relative to the chart.
func Files() (map[string][]byte, error) {
	files := map[string][]byte{}
	expect := map[string]any{}
	for _, d := range Distros {
		profile, _ := distros.RecordOf(d)
		for _, m := range renderer.ModesOf(profile) {
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
	files["templates/_presets.tpl"] = []byte(fmt.Sprintf("{{- /* Generated from aws-ccm-renderer's output for the upstream chart (make generate): do not edit. */ -}}\n"+
		"{{- /* What each distro and mode needs in the upstream chart's values; templates/validate.yaml checks it. */ -}}\n"+
		"{{- define \"aws-ccm-rancher.presets\" -}}\n%s{{- end -}}\n", b))
	var apis strings.Builder
	for _, a := range renderer.MigrationAPIs {
		fmt.Fprintf(&apis, "- since: %q\n  apiVersion: %s\n  featureGate: %v\n", a.Since, a.APIVersion, a.FeatureGate)
	}
	files["templates/_presets.tpl"] = append(files["templates/_presets.tpl"], fmt.Sprintf(
		"{{- /* The LeaderMigrationConfiguration API versions by the CCM's minor, oldest first. */ -}}\n"+
			"{{- define \"aws-ccm-rancher.migrationAPIs\" -}}\n%s{{- end -}}\n", apis.String())...)
	var pins strings.Builder
	tags := releases.Tags()
	for _, minor := range slices.Sorted(maps.Keys(tags)) {
		fmt.Fprintf(&pins, "%q: %q\n", strconv.Itoa(minor), releases.PinHint(tags[minor]))
	}
	recs := Records(distros.Records())
	files["templates/_presets.tpl"] = append(files["templates/_presets.tpl"], fmt.Sprintf(
		"{{- /* The CCM image tag to pin per Kubernetes minor (%s). */ -}}\n"+
			"{{- define \"aws-ccm-rancher.ccmReleases\" -}}\n%s{{- end -}}\n"+
			"{{- /* The last Kubernetes minor with the in-tree AWS provider: the clusters that migrate run it or an older one. */ -}}\n"+
			"{{- define \"aws-ccm-rancher.lastInTreeMinor\" -}}%d{{- end -}}\n%s",
		releases.CCMSource, pins.String(), releases.LastInTreeMinor, DistroDefines(recs))...)
	files["templates/_presets.tpl"] = append(files["templates/_presets.tpl"], VerdictDefines()...)
	files["questions.yaml"] = Questions(recs)
	lm, err := migrateTemplate()
	if err != nil {
		return nil, err
	}
	files["templates/leader-migration.yaml"] = lm
	return files, nil
}

// DistroDefines are the chart's named templates of the distributions it
// serves (recs): their names as a list and for people, and those without
// migrate mode, which templates/validate.yaml includes.
func DistroDefines(recs []distros.Record) string {
	quoted := func(recs []distros.Record) string {
		var q []string
		for _, v := range distros.Values(recs) {
			q = append(q, strconv.Quote(v))
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return "{{- /* The distributions the chart serves. */ -}}\n" +
		"{{- define \"aws-ccm-rancher.distros\" -}}" + quoted(recs) + "{{- end -}}\n" +
		"{{- define \"aws-ccm-rancher.distroChoice\" -}}" + distros.Alternatives(distros.Values(recs), "or") + "{{- end -}}\n" +
		"{{- /* The distributions without migrate mode: built without the in-tree cloud providers. */ -}}\n" +
		"{{- define \"aws-ccm-rancher.noMigrate\" -}}" + quoted(distros.WithMigrate(recs, false)) + "{{- end -}}\n"
}

// VerdictDefines are the chart's named templates of the renderer's
// verdicts, "aws-ccm-rancher.verdict.<ID>": the reason each refusal or
// warning of templates/ words as every front end does.
func VerdictDefines() string {
	var b strings.Builder
	b.WriteString("{{- /* The reasons of the renderer's verdicts, which the chart's refusals and warnings give in the same words. */ -}}\n")
	for _, v := range renderer.Verdicts {
		fmt.Fprintf(&b, "{{- define \"aws-ccm-rancher.verdict.%s\" -}}%s{{- end -}}\n", v.ID, v.Reason)
	}
	return b.String()
}

// Questions is the chart's Rancher Apps form (questions.yaml) for the
// distributions it serves (recs): the default distribution first, the mode
// question hidden for those without migrate mode.
func Questions(recs []distros.Record) []byte {
	def, _, _ := strings.Cut(Default, "-")
	options := []string{def}
	for _, v := range distros.Values(recs) {
		if v != def {
			options = append(options, v)
		}
	}
	var b strings.Builder
	b.WriteString("# Generated from aws-ccm-renderer's distributions (make generate): do not edit.\n")
	fmt.Fprintf(&b, "# Rancher Apps form. Distributions other than %s, and migrate mode, also need\n", distros.DisplayName(distros.Distro(def)))
	b.WriteString("# their preset values (presets/<distro>-<mode>.yaml): paste the preset into the\n")
	b.WriteString("# values YAML editor; the chart refuses values that do not match these answers.\n")
	b.WriteString("questions:\n")
	b.WriteString("  - variable: distro\n")
	b.WriteString("    label: Kubernetes distribution\n")
	fmt.Fprintf(&b, "    description: \"Where the cloud controller manager runs: the control-plane nodes of this distribution. For anything but %s, use presets/<distro>-<mode>.yaml as values.\"\n", def)
	b.WriteString("    type: enum\n")
	fmt.Fprintf(&b, "    options: [%s]\n", strings.Join(options, ", "))
	fmt.Fprintf(&b, "    default: %s\n", def)
	b.WriteString("    required: true\n")
	b.WriteString("    group: Cluster\n")
	noMigrate := distros.WithMigrate(recs, false)
	var showIf []string
	for _, p := range noMigrate {
		showIf = append(showIf, "distro!="+string(p.Distro))
	}
	if len(noMigrate) > 0 {
		names := distros.DisplayNames(noMigrate)
		values := distros.Values(noMigrate)
		fmt.Fprintf(&b, "  # %s %s no migrate mode: %s built without the in-tree cloud\n", distros.Alternatives(names, "and"), plural(len(names), "has", "have"), plural(len(names), "it is", "they are"))
		fmt.Fprintf(&b, "  # providers, and %s move to the CCM is a switch (aws-ccm-renderer plan\n", plural(len(names), "its", "their"))
		fmt.Fprintf(&b, "  # --distro %s), so the question is not asked for %s.\n", strings.Join(values, "|"), plural(len(names), "it", "them"))
	}
	b.WriteString("  - variable: mode\n")
	b.WriteString("    label: Mode\n")
	b.WriteString("    description: \"install: the cloud controller manager alone. migrate: leader migration with the in-tree controller manager during a zero-downtime move; use presets/<distro>-migrate.yaml as values, and switch back to install afterwards.\"\n")
	b.WriteString("    type: enum\n")
	b.WriteString("    options: [install, migrate]\n")
	b.WriteString("    default: install\n")
	b.WriteString("    required: true\n")
	if len(showIf) > 0 {
		fmt.Fprintf(&b, "    show_if: %q\n", strings.Join(showIf, "&&"))
	}
	b.WriteString("    group: Cluster\n")
	b.WriteString("  - variable: " + Subchart + ".image.tag\n")
	b.WriteString("    label: CCM image tag\n")
	var tags []string
	for minor := releases.LastInTreeMinor; ; minor-- {
		tag, ok := releases.Latest(minor)
		if !ok {
			break
		}
		tags = append(tags, fmt.Sprintf("%s for 1.%d", tag, minor))
	}
	fmt.Fprintf(&b, "    description: \"The cloud controller manager release of the cluster's Kubernetes minor: %s. The chart refuses a CCM of another minor than the cluster's.\"\n", strings.Join(tags, ", "))
	b.WriteString("    type: string\n")
	fmt.Fprintf(&b, "    default: %s\n", pinnedTag(renderer.ModeMigrate))
	b.WriteString("    required: true\n")
	b.WriteString("    show_if: \"mode=migrate\"\n")
	b.WriteString("    group: Cluster\n")
	// In install mode the tag is the upstream chart's unless the values set
	// one: a question of its own would need a default, and none fits every
	// cluster. The skew question says which tag fits which minor.
	var newer []string
	all := releases.Tags()
	for _, minor := range slices.Backward(slices.Sorted(maps.Keys(all))) {
		if minor > releases.LastInTreeMinor {
			newer = append(newer, fmt.Sprintf("%s for 1.%d", all[minor], minor))
		}
	}
	b.WriteString("  - variable: allowVersionSkew\n")
	b.WriteString("    label: Allow a CCM of another Kubernetes minor\n")
	fmt.Fprintf(&b, "    description: \"The chart refuses a CCM of another minor than the cluster's, naming the tag to set. In install mode the CCM is the upstream chart's %s unless the values (Edit YAML) set %s.image.tag: %s. true installs it anyway, and the app's notes warn.\"\n",
		upstreamTag(), Subchart, strings.Join(newer, ", "))
	b.WriteString("    type: boolean\n")
	b.WriteString("    default: false\n")
	b.WriteString("    group: Cluster\n")
	b.WriteString("  - variable: leaderName\n")
	b.WriteString("    label: Migration lease\n")
	b.WriteString("    description: The lease the in-tree controller manager and the cloud controller manager share during a migration.\n")
	b.WriteString("    type: string\n")
	b.WriteString("    default: " + renderer.DefaultLeaderName + "\n")
	b.WriteString("    show_if: \"mode=migrate\"\n")
	b.WriteString("    group: Cluster\n")
	b.WriteString("  - variable: kcmUser\n")
	b.WriteString("    label: In-tree controller manager's identity\n")
	fmt.Fprintf(&b, "    description: \"The user the in-tree kube-controller-manager authenticates as (%s on %s). Migrate mode lets it hold the migration lease, which Kubernetes up to 1.26 does not.\"\n",
		renderer.DefaultKCMUser, distros.Alternatives(distros.DisplayNames(distros.WithMigrate(recs, true)), "and"))
	b.WriteString("    type: string\n")
	b.WriteString("    default: " + renderer.DefaultKCMUser + "\n")
	b.WriteString("    show_if: \"mode=migrate\"\n")
	b.WriteString("    group: Cluster\n")
	return []byte(b.String())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// regenerated says, in a values file's header, what rewrites it and how a
// user adds to it: users copy these files as their values (the README, the
// Rancher form) and add their own flags and tolerations to the lists.
const regenerated = "# `make generate` in the aws-ccm-renderer repository rewrites this file. As your values, copy it\n" +
	"# and add your own flags and tolerations to its lists: the chart checks that what it needs is there.\n"

func presetHeader(d distros.Distro, m renderer.Mode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Values for distro=%s mode=%s, generated from aws-ccm-renderer's output for the upstream chart.\n", d, m)
	b.WriteString(regenerated)
	fmt.Fprintf(&b, "# From the chart's directory (charts/aws-ccm-rancher, after helm dependency build):\n")
	fmt.Fprintf(&b, "#   helm install aws-ccm . -n kube-system -f presets/%s-%s.yaml", d, m)
	tag, pinned := pinnedTag(m), "is pinned to"
	if tag == "" {
		tag, pinned = upstreamTag(), "is the upstream chart's"
	}
	fmt.Fprintf(&b, "\n# The CCM %s %s, for a cluster at Kubernetes 1.%d; on a cluster of another minor, add\n"+
		"#   --set %s.image.tag=<the CCM release of its minor>\n# (the chart refuses a CCM of another minor than the cluster's).\n",
		pinned, tag, minorOf(tag), Subchart)
	fmt.Fprintf(&b, "# The upstream chart's values go under %s; lists here replace the chart's whole.\n", Subchart)
	return b.String()
}

func defaultValues(preset []byte) []byte {
	var b strings.Builder
	b.WriteString("# Values of aws-ccm-rancher, generated from aws-ccm-renderer's output for the upstream chart.\n")
	b.WriteString(regenerated)
	b.WriteString("# the defaults are presets/" + Default + ".yaml.\n#\n")
	b.WriteString("# distro: " + distros.Alternatives(distros.Values(Records(distros.Records())), "or") + " (auto needs a node affinity, which the upstream\n")
	b.WriteString("#   chart has no value for). mode: install, or migrate during a move off the in-tree\n")
	b.WriteString("#   cloud provider. For another distro or mode, install with -f presets/<distro>-<mode>.yaml:\n")
	b.WriteString("#   a parent chart cannot compute its subchart's values, so the values below must match;\n")
	b.WriteString("#   templates/validate.yaml fails with what to change when they do not.\n")
	b.WriteString("# leaderName: the lease shared with the in-tree controller manager during a migration.\n")
	b.WriteString("# " + Subchart + ": the upstream chart's own values, passed through.\n")
	b.WriteString("# kcmUser: the in-tree controller manager's identity, which migrate mode lets hold that lease.\n")
	fmt.Fprintf(&b, "# allowVersionSkew: the chart refuses a CCM (%s.image.tag; unset, the upstream\n", Subchart)
	fmt.Fprintf(&b, "#   chart's %s) of another minor than the cluster's, naming the tag to set, and in migrate\n", upstreamTag())
	fmt.Fprintf(&b, "#   mode a cluster with no in-tree provider (1.%d and later); true installs it anyway, and the\n", releases.LastInTreeMinor+1)
	b.WriteString("#   chart's notes warn.\n")
	b.WriteString("leaderName: " + renderer.DefaultLeaderName + "\n")
	b.WriteString("kcmUser: " + renderer.DefaultKCMUser + "\n")
	b.WriteString("allowVersionSkew: false\n")
	b.Write(preset)
	return []byte(b.String())
}

// Placeholders the objects of migrate mode are rendered with, and the
// template expressions that stand for them in the chart.
var placeholders = []struct{ text, expr string }{
	{"workloadplaceholder", "$ccm.nameOverride"},
	{"namespaceplaceholder", "$ccm.namespace"},
	{"leaderplaceholder", "$.Values.leaderName"},
	{"kcmuserplaceholder", "$.Values.kcmUser"},
}

// scalarWithPlaceholder is a YAML scalar, quoted or not, holding a
// placeholder.
var scalarWithPlaceholder = regexp.MustCompile(`"?[A-Za-z0-9:._/-]*placeholder[A-Za-z0-9:._/-]*"?`)

var leaderNameLine = regexp.MustCompile(`(?m)^( *)leaderName: .*\n`)

// migrateTemplate renders the objects the renderer adds in migrate mode
// with placeholders for the names the chart's values decide, and turns them
// into a template: the leader migration ConfigMap named after the upstream
// chart's workload, with the LeaderMigrationConfiguration version the CCM's
// image reads (templates/_helpers of this chart pick it), and the Role and
// RoleBinding for the in-tree controller manager.
func migrateTemplate() ([]byte, error) {
	o := renderer.DefaultOptions()
	o.Distro, o.Mode, o.LeaderName, o.KCMUser = Distros[0], renderer.ModeMigrate, "leaderplaceholder", "kcmuserplaceholder"
	in, err := upstream.DefaultsTagged(pinnedTag(renderer.ModeMigrate))
	if err != nil {
		return nil, err
	}
	ds := in[len(in)-1]
	if err := ds.SetName("workloadplaceholder"); err != nil {
		return nil, err
	}
	if err := ds.SetNamespace("namespaceplaceholder"); err != nil {
		return nil, err
	}
	r, err := upstream.RenderObjects(o, in)
	if err != nil {
		return nil, err
	}
	text, err := r.GeneratedYAML(nil)
	if err != nil {
		return nil, err
	}
	last := renderer.MigrationAPIs[len(renderer.MigrationAPIs)-1].APIVersion
	if !strings.Contains(text, "apiVersion: "+last+"\n") {
		return nil, fmt.Errorf("the rendered LeaderMigrationConfiguration is not %s", last)
	}
	text = strings.Replace(text, "apiVersion: "+last+"\n", "apiVersion: {{ include \"aws-ccm-rancher.migrationAPI\" . }}\n", 1)
	// The older API versions need resourceLock, which the v1 text lacks.
	var locked []string
	for _, a := range renderer.MigrationAPIs {
		if a.ResourceLock {
			locked = append(locked, strconv.Quote(a.APIVersion))
		}
	}
	m := leaderNameLine.FindStringSubmatchIndex(text)
	if m == nil {
		return nil, fmt.Errorf("no leaderName in the rendered LeaderMigrationConfiguration")
	}
	indent := text[m[2]:m[3]]
	text = text[:m[1]] + fmt.Sprintf("%[1]s{{- if has (include \"aws-ccm-rancher.migrationAPI\" .) (list %[2]s) }}\n%[1]sresourceLock: leases\n%[1]s{{- end }}\n",
		indent, strings.Join(locked, " ")) + text[m[1]:]
	text = scalarWithPlaceholder.ReplaceAllStringFunc(text, func(s string) string {
		s = strings.Trim(s, `"`)
		var args []string
		for _, p := range placeholders {
			for strings.Contains(s, p.text) {
				i := strings.Index(s, p.text)
				args = append(args, p.expr)
				s = s[:i] + "%s" + s[i+len(p.text):]
			}
		}
		if s == "%s" {
			return "{{ " + args[0] + " | quote }}"
		}
		return fmt.Sprintf("{{ printf %q %s | quote }}", s, strings.Join(args, " "))
	})
	var b strings.Builder
	b.WriteString("{{- /* Generated from what aws-ccm-renderer adds in migrate mode (make generate): do not edit. */ -}}\n")
	b.WriteString("{{- if eq .Values.mode \"migrate\" }}\n")
	b.WriteString("{{- $ccm := index .Values \"" + Subchart + "\" }}\n")
	b.WriteString(text)
	b.WriteString("{{- end }}\n")
	return []byte(b.String()), nil
}

// Names lists the generated files in order.
func Names(files map[string][]byte) []string { return slices.Sorted(maps.Keys(files)) }
