//go:build helmsdk

package cli

import (
	"errors"
	"fmt"
	"io"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// newInstall is an install as the flags say; it is also what diff runs (a
// server-side dry run) when the release does not exist yet.
func (w *wrapper) newInstall(pr postrender.PostRenderer) *action.Install {
	inst := action.NewInstall(w.cfg)
	inst.ReleaseName, inst.Namespace, inst.CreateNamespace = w.release, w.namespace, w.flags.createNS
	inst.Wait, inst.Timeout, inst.Atomic = w.flags.wait || w.flags.atomic, w.flags.timeout, w.flags.atomic
	inst.PostRenderer = pr
	switch w.flags.dryRun {
	case "client":
		// No cluster: charts see --kube-version, as with template.
		inst.DryRun, inst.DryRunOption, inst.ClientOnly, inst.Replace = true, "client", true, true
		inst.KubeVersion = w.kubeVersion
	case "server":
		inst.DryRun, inst.DryRunOption = true, "server"
	}
	return inst
}

// newUpgrade is an upgrade as the flags say.
func (w *wrapper) newUpgrade(pr postrender.PostRenderer) *action.Upgrade {
	up := action.NewUpgrade(w.cfg)
	up.Namespace = w.namespace
	up.Wait, up.Timeout, up.Atomic = w.flags.wait || w.flags.atomic, w.flags.timeout, w.flags.atomic
	up.ReuseValues, up.ResetValues, up.ResetThenReuseValues = w.flags.reuseValues, w.flags.resetValues, w.flags.resetThenReuse
	up.MaxHistory = w.flags.historyMax
	up.PostRenderer = pr
	if w.flags.dryRun != "none" {
		up.DryRun, up.DryRunOption = true, w.flags.dryRun
	}
	return up
}

func (w *wrapper) installRelease(ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer) error {
	return w.install(w.newInstall(pr), ch, vals)
}

func (w *wrapper) install(inst *action.Install, ch *chart.Chart, vals map[string]any) error {
	if inst.Wait {
		w.progress.Begin(fmt.Sprintf("installing %s and waiting for it to be ready (timeout %s)", w.release, w.flags.timeout))
	}
	rel, err := inst.Run(ch, vals)
	if inst.Wait {
		w.progress.End(err)
	}
	if err != nil {
		return renderError(err)
	}
	return w.report(rel)
}

func (w *wrapper) upgradeRelease(ch *chart.Chart, vals map[string]any, pr postrender.PostRenderer) error {
	if w.flags.install {
		gone, uninstalled, err := w.releaseGone()
		if err != nil {
			return err
		}
		if gone {
			inst := w.newInstall(pr)
			// As the Helm CLI: an uninstalled release's name is free
			// again, its history kept.
			inst.Replace = inst.Replace || uninstalled
			return w.install(inst, ch, vals)
		}
	}
	up := w.newUpgrade(pr)
	if up.Wait {
		w.progress.Begin(fmt.Sprintf("upgrading %s and waiting for it to be ready (timeout %s)", w.release, w.flags.timeout))
	}
	rel, err := up.Run(w.release, ch, vals)
	if up.Wait {
		w.progress.End(err)
	}
	if err != nil {
		if errors.Is(err, driver.ErrNoDeployedReleases) || errors.Is(err, driver.ErrReleaseNotFound) {
			return &renderer.InputError{Err: fmt.Errorf("release %s in namespace %s: %w (upgrade --install installs it)", w.release, w.namespace, err)}
		}
		return renderError(err)
	}
	return w.report(rel)
}

// releaseGone tells whether the release does not exist: never installed,
// or uninstalled with its history kept (uninstalled).
func (w *wrapper) releaseGone() (gone, uninstalled bool, err error) {
	h, err := action.NewHistory(w.cfg).Run(w.release)
	if errors.Is(err, driver.ErrReleaseNotFound) || (err == nil && len(h) == 0) {
		return true, false, nil
	}
	if err != nil {
		return false, false, &ioError{fmt.Errorf("release %s in namespace %s: %w", w.release, w.namespace, err)}
	}
	last := h[0]
	for _, r := range h {
		if r.Version > last.Version {
			last = r
		}
	}
	uninstalled = last.Info != nil && last.Info.Status == release.StatusUninstalled
	return uninstalled, uninstalled, nil
}

// report prints what install or upgrade did; a dry run prints the
// manifests.
func (w *wrapper) report(rel *release.Release) error {
	if w.flags.dryRun != "none" {
		_, err := io.WriteString(w.out, manifestOf(rel))
		return writeErr(err)
	}
	_, err := fmt.Fprintf(w.out, "release %s in namespace %s: revision %d, %s (chart %s-%s)\n",
		rel.Name, rel.Namespace, rel.Version, rel.Info.Status, rel.Chart.Metadata.Name, rel.Chart.Metadata.Version)
	return writeErr(err)
}
