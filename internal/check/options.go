package check

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

// The options a component no longer takes, at the cluster's version or at
// the one it is about to move to (check --upgrade-to): every change is a
// record of releases.OptionChanges, judged against what the API shows of
// each component's options: the control plane's mirror pods, the kubelet
// arguments distributions record on each node (NodeFacts.NodeArgs), the
// cluster's configuration (NodeFacts.ClusterConfigMap).

// kubeadmConfigName is the ConfigMap of kube-system kubeadm keeps its
// ClusterConfiguration in.
var kubeadmConfigName = strings.TrimPrefix(releases.KubeadmConfig, metav1.NamespaceSystem+"/")

// collectKubeadmConfig reads kubeadm's ConfigMap on a kubeadm cluster. Not
// there, or not readable, is a fact of the snapshot.
func (s *Snapshot) collectKubeadmConfig(ctx context.Context, client kubernetes.Interface) error {
	if facts(Detect(s.Nodes).Detected).ClusterConfigMap != releases.KubeadmConfig {
		return nil
	}
	cm, err := client.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, kubeadmConfigName, metav1.GetOptions{})
	switch {
	case err == nil:
		s.KubeadmConfig = cm
	case apierrors.IsNotFound(err):
	case apierrors.IsForbidden(err):
		s.KubeadmConfigUnread = "check may not get configmaps " + releases.KubeadmConfig
	default:
		return clusterError("get", "configmaps", metav1.NamespaceSystem, err)
	}
	return nil
}

// upgradeForm is a Kubernetes version as --upgrade-to takes it.
var upgradeForm = regexp.MustCompile(`^v?1\.[1-9]\d*(\.\d+)?$`)

// UpgradeMinor is the minor of Input.UpgradeTo; 0 without it.
func (in Input) UpgradeMinor() int {
	m, _ := minorOf(in.UpgradeTo)
	return m
}

// ParseUpgradeTo reads --upgrade-to: a Kubernetes version, 1.37 or
// v1.37.2.
func ParseUpgradeTo(v string) (int, error) {
	m, ok := minorOf(v)
	if !ok || !upgradeForm.MatchString(v) {
		return 0, fmt.Errorf("--upgrade-to %q: give a Kubernetes version, such as 1.%d or v1.%d.0", v, releases.LastMinor(), releases.LastMinor())
	}
	return m, nil
}

// optionUse is one component given an option a change is about: where,
// what it was given, at which minor it runs.
type optionUse struct {
	where string // the node, or what holds the option (ConfigMap kube-system/kubeadm-config)
	given string // as given: --cloud-provider=external
	minor int    // the component's minor; 0 when unknown
	// release is the distribution release the node runs
	// (v1.31.2+rke2r1), for a change that came with patch releases.
	release string
}

// optionsRule reports the options components are given that their
// release, or the one --upgrade-to names, no longer takes.
func optionsRule(v *View) []Finding {
	server, _ := minorOf(v.KubernetesVersion)
	up := v.UpgradeMinor()
	var out []Finding
	for _, c := range releases.OptionChanges {
		uses := v.optionUses(c)
		var issues []NodeIssue
		for _, u := range uses {
			if u.release != "" && len(c.Releases) > 0 && c.Minor == 0 {
				issues = append(issues, judgeRelease(c, u, up))
				continue
			}
			minor := u.minor
			if minor == 0 {
				minor = server
			}
			if i, ok := judgeOption(c, u, minor, up); ok {
				issues = append(issues, i)
			}
		}
		for _, f := range GroupNodes(issues) {
			f.Subject = c.Component + " on " + f.Subject
			if strings.HasPrefix(issues[0].Node, "ConfigMap ") {
				f.Subject = c.Component + ": " + strings.TrimPrefix(f.Subject, c.Component+" on ")
			}
			out = append(out, f)
		}
	}
	if v.KubeadmConfigUnread != "" && up >= kubeadmV1beta3Gone() {
		out = append(out, Finding{Area: AreaOptions, Severity: Info, Subject: "kubeadm",
			Message: v.KubeadmConfigUnread + ": the API version of its ClusterConfiguration is not checked",
			Fix:     "kubectl -n kube-system get configmap kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' | head -1"})
	}
	return out
}

func kubeadmV1beta3Gone() int {
	c, _ := releases.Change("kubeadm", "kubeadm.k8s.io/v1beta3")
	return c.Minor
}

// namingShim says which of RKE2's keys that name a node from instance
// metadata its recorded arguments set ("" for none): cloud-provider-name:
// aws or node-name-from-cloud-provider-metadata (true, or the bare flag).
func namingShim(args []string) string {
	const key = "node-name-from-cloud-provider-metadata"
	if names := argValues(args, "cloud-provider-name"); len(names) > 0 && names[len(names)-1] == "aws" {
		return "cloud-provider-name: aws"
	}
	on := false // the last occurrence counts, as the flag parser reads them
	for i, a := range args {
		v, set := strings.CutPrefix(a, "--"+key+"=")
		if !set && a == "--"+key {
			set, v = true, "true"
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				v = args[i+1]
			}
		}
		if set {
			b, err := strconv.ParseBool(v)
			on = err != nil || b
		}
	}
	if on {
		return key + ": true"
	}
	return ""
}

// hasNode tells whether the snapshot holds a Node of that name.
func (v *View) hasNode(name string) bool {
	return slices.ContainsFunc(v.Snapshot.Nodes, func(n corev1.Node) bool { return n.Name == name })
}

// judgeRelease says what an option does at the distribution release a node
// runs, for a change that came with patch releases: an error once in
// force, else a warning naming the release that brings it.
func judgeRelease(c releases.OptionChange, u optionUse, up int) NodeIssue {
	i := NodeIssue{Node: u.where, Finding: Finding{Area: AreaOptions, Fix: c.Fix, Source: c.Source}}
	at := u.given + " at " + u.release
	if c.InRelease(u.release) {
		i.Severity, i.Message = Error, at+": "+c.Says
		return i
	}
	next := c.FirstAfter(u.release)
	if next == "" {
		next = c.ReleasesOf()
	}
	i.Severity, i.Message = Warning, at+": from "+next+" on, "+c.Says
	i.Fix = c.Fix + ", before the upgrade to " + next
	if up > 0 && c.In(up) {
		i.Severity = Error
		i.Message = fmt.Sprintf("%s, upgrading to 1.%d: %s", at, up, c.Says)
		i.Fix = fmt.Sprintf("%s, before the upgrade to 1.%d", c.Fix, up)
	}
	return i
}

// judgeOption says what an option does at the component's minor and at the
// upgrade's: an error once the change is in force at either; ahead of it a
// warning the minor before and a fact before that, for the options whose
// fix needs no migration (the in-tree provider's are the migration's).
func judgeOption(c releases.OptionChange, u optionUse, minor, up int) (NodeIssue, bool) {
	first := c.FirstMinor()
	i := NodeIssue{Node: u.where, Finding: Finding{Area: AreaOptions, Fix: c.Fix, Source: c.Source}}
	at := fmt.Sprintf("%s at 1.%d", u.given, minor)
	if minor == 0 {
		at = u.given
	}
	switch {
	case minor >= first:
		i.Severity, i.Message = Error, at+": "+c.Says
	case up >= first:
		i.Severity = Error
		i.Message = fmt.Sprintf("%s, upgrading to 1.%d: %s", at, up, c.Says)
		i.Fix = fmt.Sprintf("%s, before the upgrade to 1.%d", c.Fix, up)
	case strings.HasSuffix(c.Option, "=aws"):
		return i, false
	case minor == first-1:
		i.Severity, i.Message, i.Fix = Warning, at+": "+c.Says, fmt.Sprintf("%s, before 1.%d", c.Fix, first)
	default:
		i.Severity, i.Message, i.Fix = Info, at+": "+c.Says, fmt.Sprintf("%s, before 1.%d", c.Fix, first)
	}
	return i, true
}

// cloudControllers are the names kube-controller-manager's --controllers
// took for its cloud controllers up to 1.36.
var cloudControllers = []string{"service", "route", "cloud-node-lifecycle", "service-lb-controller", "node-route-controller", "cloud-node-lifecycle-controller"}

// optionUses finds the components given the option a change is about.
func (v *View) optionUses(c releases.OptionChange) []optionUse {
	var out []optionUse
	switch c.Component + " " + c.Option {
	case "kube-apiserver --cloud-provider":
		for _, a := range v.controlPlaneProcesses(programAPIServer) {
			if p, ok := a.flags["cloud-provider"]; ok {
				out = append(out, optionUse{where: a.node, given: "--cloud-provider=" + p, minor: a.minor})
			} else if p, ok := a.flags["cloud-config"]; ok {
				out = append(out, optionUse{where: a.node, given: "--cloud-config=" + p, minor: a.minor})
			}
		}
	case "kube-controller-manager --cloud-provider=aws":
		for _, k := range v.controlPlaneProcesses(programKCM) {
			if k.flags["cloud-provider"] == "aws" {
				out = append(out, optionUse{where: k.node, given: "--cloud-provider=aws", minor: k.minor})
			}
		}
	case "kube-controller-manager --controllers=-cloud-node-lifecycle":
		for _, k := range v.controlPlaneProcesses(programKCM) {
			var named []string
			for _, n := range strings.Split(k.flags["controllers"], ",") {
				if slices.Contains(cloudControllers, strings.TrimPrefix(n, "-")) {
					named = append(named, n)
				}
			}
			if len(named) > 0 {
				out = append(out, optionUse{where: k.node, given: "--controllers naming " + strings.Join(named, ","), minor: k.minor})
			}
		}
	case "kubelet --cloud-provider=aws", "kubelet --cloud-config":
		flag, _, _ := strings.Cut(strings.TrimPrefix(c.Option, "--"), "=")
		for _, n := range v.Snapshot.Nodes {
			minor, _ := minorOf(n.Status.NodeInfo.KubeletVersion)
			for _, a := range argValues(nodeArgs(&n), "kubelet-arg") {
				k, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if k == flag && (flag != "cloud-provider" || val == "aws") {
					out = append(out, optionUse{where: n.Name, given: "kubelet-arg " + strings.TrimLeft(a, "-"), minor: minor})
				}
			}
		}
	case "kubeadm kubeadm.k8s.io/v1beta3":
		if cm := v.KubeadmConfig; cm != nil {
			var head struct {
				APIVersion string `json:"apiVersion"`
			}
			if yaml.Unmarshal([]byte(cm.Data["ClusterConfiguration"]), &head) == nil && head.APIVersion == c.Option {
				out = append(out, optionUse{where: "ConfigMap " + releases.KubeadmConfig, given: "ClusterConfiguration " + c.Option, minor: 0})
			}
		}
	case "rke2 node-name":
		for _, n := range v.Snapshot.Nodes {
			if d, _ := nodeDistro(&n); d != c.Component {
				continue
			}
			args := nodeArgs(&n)
			names, shim := argValues(args, "node-name"), namingShim(args)
			if len(names) == 0 || shim == "" {
				continue
			}
			release := n.Status.NodeInfo.KubeletVersion
			if release == "" {
				release = v.KubernetesVersion
			}
			// Named from the metadata already: the finding is the Node
			// under its node-name, left behind; the same name, or no such
			// Node (never registered under it), no harm.
			if c.InRelease(release) && (n.Name == names[len(names)-1] || !v.hasNode(names[len(names)-1])) {
				continue
			}
			minor, _ := minorOf(release)
			out = append(out, optionUse{where: n.Name, given: "node-name " + names[len(names)-1] + " with " + shim, minor: minor, release: release})
		}
	case "rke2 disable-cloud-controller":
		for _, n := range v.Snapshot.Nodes {
			args := nodeArgs(&n)
			if d, _ := nodeDistro(&n); d != c.Component || len(args) == 0 || args[0] != "server" {
				continue
			}
			if len(argValues(args, "cloud-provider-name")) == 0 || slices.Contains(args, "--disable-cloud-controller") ||
				slices.Contains(argValues(args, "disable-cloud-controller"), "true") {
				continue
			}
			minor, _ := minorOf(n.Status.NodeInfo.KubeletVersion)
			out = append(out, optionUse{where: n.Name, given: "cloud-provider-name without disable-cloud-controller", minor: minor})
		}
	}
	return out
}
