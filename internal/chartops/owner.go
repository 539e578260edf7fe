package chartops

import (
	"fmt"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// Owner is a deployed release whose manifest runs the CCM.
type Owner struct {
	Release  string
	Workload string // "DaemonSet kube-system/aws-cloud-controller-manager"
}

// ccmOwner returns the deployed release of the storage's namespace, other
// than name, whose manifest runs the CCM (by the renderer's
// identification rule), the first by name; nil when there is none.
func ccmOwner(cfg *action.Configuration, name string) (*Owner, error) {
	if cfg == nil || cfg.Releases == nil {
		return nil, nil
	}
	rels, err := cfg.Releases.ListDeployed()
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rels, func(a, b *release.Release) int { return strings.Compare(a.Name, b.Name) })
	for _, rel := range rels {
		if rel.Name == name {
			continue
		}
		ccm, _, err := workloadsOf(rel.Manifest)
		if err != nil || len(ccm) == 0 {
			continue
		}
		w := ccm[0]
		ref := w.GetKind() + " " + w.GetName()
		if ns := w.GetNamespace(); ns != "" {
			ref = w.GetKind() + " " + ns + "/" + w.GetName()
		}
		return &Owner{Release: rel.Name, Workload: ref}, nil
	}
	return nil, nil
}

// OwnedElsewhere refuses to install, or compare with, a release that does not
// exist when another release of its namespace runs the CCM: most likely
// RELEASE is not the name the CCM was installed with (the chart commands'
// default, aws-cloud-controller-manager, where the README's Helm commands
// named it aws-ccm). The error names the release that owns the CCM and
// the command with it.
func (c *Client) OwnedElsewhere(name, namespace string) error {
	return ownedElsewhere(c.Config, name, namespace, func(owner string) string {
		return fmt.Sprintf("%s as RELEASE (aws-ccm-renderer %s %s ...)", owner, c.Verb, owner)
	})
}

// ownedElsewhere is the input error for a release name that is not there
// while release owner runs the CCM in its namespace, with use(owner)
// saying how to name it; nil when no other release runs the CCM, or the
// releases cannot be listed (a hint: the command's own error follows).
func ownedElsewhere(cfg *action.Configuration, name, namespace string, use func(owner string) string) error {
	o, err := ccmOwner(cfg, name)
	if err != nil || o == nil {
		return nil
	}
	return &renderer.InputError{Err: fmt.Errorf("no release %s in namespace %s, and the CCM (%s) is owned by release %s: use %s",
		name, namespace, o.Workload, o.Release, use(o.Release))}
}
