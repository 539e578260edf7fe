//go:build helmsdk

package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// What the cluster tells the chart wrapper commands: its Kubernetes version
// (for the renderer's version checks) and, for upgrade and diff --deployed,
// the options the deployed release was rendered with (the workload's
// renderer.OptionsAnnotation), which are the defaults of the options not
// given on the command line.

// recordedOptions are the options the renderer records on the workload.
func recordedOptions() []renderer.Option {
	var out []renderer.Option
	for _, op := range renderer.OptionTable {
		if op.Recorded {
			out = append(out, op)
		}
	}
	return out
}

// explicitOptions returns the options given on the command line or in the
// --config file, by flag name.
func explicitOptions(fs *pflag.FlagSet, config string) (map[string]bool, error) {
	given := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { given[f.Name] = true })
	if config == "" {
		return given, nil
	}
	// The config file was read and checked already; this reads which
	// fields it sets.
	data, err := os.ReadFile(config)
	if err != nil {
		return nil, &renderer.UsageError{Err: fmt.Errorf("--config: %w", err)}
	}
	var fields map[string]any
	if err := sigsyaml.Unmarshal(data, &fields); err != nil {
		return nil, &renderer.UsageError{Err: fmt.Errorf("--config %s: %w", config, err)}
	}
	for _, op := range renderer.OptionTable {
		if _, ok := fields[string(op.Opt)]; ok {
			given[op.Flag] = true
		}
	}
	return given, nil
}

// deployedRelease returns the release's deployed revision, nil when there
// is none.
func (w *wrapper) deployedRelease() (*release.Release, error) {
	rel, err := w.cfg.Releases.Deployed(w.release)
	if errors.Is(err, driver.ErrReleaseNotFound) || errors.Is(err, driver.ErrNoDeployedReleases) {
		return nil, nil
	}
	if err != nil {
		return nil, &ioError{fmt.Errorf("release %s in namespace %s: %w", w.release, w.namespace, err)}
	}
	return rel, nil
}

// withRecordedOptions returns opts with every recorded option of the
// deployed release that was not given explicitly, and says on stderr which
// it took.
func (w *wrapper) withRecordedOptions(opts renderer.Options, given map[string]bool) (renderer.Options, error) {
	rel, err := w.deployedRelease()
	if err != nil || rel == nil {
		return opts, err
	}
	rec, ok, err := recordedOptionsOf(rel.Manifest)
	if err != nil {
		return opts, &renderer.InputError{Err: fmt.Errorf("release %s revision %d: %w (--reset-options ignores it)", rel.Name, rel.Version, err)}
	}
	var taken []string
	for _, op := range recordedOptions() {
		if given[op.Flag] || !ok {
			continue
		}
		op.Take(&opts, rec)
		taken = append(taken, renderer.FlagArgs(rec, op.Opt)...)
	}
	switch {
	case !ok:
		fmt.Fprintf(w.errOut, "aws-ccm-renderer: release %s revision %d records no renderer options (rendered without aws-ccm-renderer or by an older one): the flags' defaults apply\n", rel.Name, rel.Version)
	case len(taken) > 0:
		fmt.Fprintf(w.errOut, "aws-ccm-renderer: options from release %s revision %d: %s (flags given here win; --reset-options ignores the release's)\n",
			rel.Name, rel.Version, strings.Join(taken, " "))
	}
	return opts, nil
}

// recordedOptionsOf reads the options recorded on the CCM workload of a
// release's manifest: the workload the renderer's identification rule
// finds (renderer.IsCCMContainer), or else the one workload that records
// options (a workload named with --target).
func recordedOptionsOf(manifest string) (renderer.Options, bool, error) {
	docs := stream.Split([][]byte{[]byte(manifest)})
	if err := stream.Scan(docs); err != nil {
		return renderer.Options{}, false, fmt.Errorf("reading its manifest: %w", err)
	}
	var ccm, recording []*yaml.RNode
	for _, d := range docs {
		if d.Kind != "DaemonSet" && d.Kind != "Deployment" {
			continue
		}
		content, err := d.Content()
		if err != nil {
			return renderer.Options{}, false, fmt.Errorf("reading its manifest: %w", err)
		}
		n, err := yaml.Parse(string(content))
		if err != nil {
			return renderer.Options{}, false, fmt.Errorf("reading its manifest: %w", d.ParseError(err))
		}
		if _, ok := n.GetAnnotations()[renderer.OptionsAnnotation]; ok {
			recording = append(recording, n)
		}
		if runsCCM(n) {
			ccm = append(ccm, n)
		}
	}
	switch {
	case len(ccm) == 1:
		return renderer.RecordedOptions(ccm[0])
	case len(recording) == 1:
		return renderer.RecordedOptions(recording[0])
	case len(recording) > 1:
		return renderer.Options{}, false, fmt.Errorf("%d workloads record renderer options", len(recording))
	}
	return renderer.Options{}, false, nil
}

// runsCCM reports whether a workload's pod template has a container the
// renderer takes for the CCM.
func runsCCM(n *yaml.RNode) bool {
	cs, err := n.Pipe(yaml.Lookup("spec", "template", "spec", "containers"))
	if err != nil || cs == nil {
		return false
	}
	items, err := cs.Elements()
	if err != nil {
		return false
	}
	for _, c := range items {
		var command []string
		if cmd := c.Field("command"); cmd != nil {
			for _, e := range cmd.Value.YNode().Content {
				command = append(command, e.Value)
			}
		}
		image := ""
		if img := c.Field("image"); img != nil {
			image = img.Value.YNode().Value
		}
		if renderer.IsCCMContainer(command, image) {
			return true
		}
	}
	return false
}

// serverVersion asks the cluster for its Kubernetes version.
func (w *wrapper) serverVersion() (string, error) {
	dc, err := w.settings.RESTClientGetter().ToDiscoveryClient()
	if err != nil {
		return "", &ioError{fmt.Errorf("connecting to the cluster: %w", err)}
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return "", &ioError{fmt.Errorf("the cluster's version (--kube-version to give it): %w", err)}
	}
	return v.GitVersion, nil
}
