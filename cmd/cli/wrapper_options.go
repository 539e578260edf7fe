//go:build helmsdk

package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
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

// recordedOption is an option the renderer records, as the command line and
// the config file spell it.
type recordedOption struct {
	flag, key string
	take      func(dst *renderer.Options, src renderer.Options)
	// spell returns the option's recorded value as flags; none when it
	// is the default and says nothing worth repeating.
	spell func(o renderer.Options) []string
}

var recordedOptions = []recordedOption{
	{"distro", "distro", func(d *renderer.Options, s renderer.Options) { d.Distro = s.Distro },
		func(o renderer.Options) []string { return []string{"--distro=" + string(o.Distro)} }},
	{"mode", "mode", func(d *renderer.Options, s renderer.Options) { d.Mode = s.Mode },
		func(o renderer.Options) []string { return []string{"--mode=" + string(o.Mode)} }},
	{"host-network", "hostNetwork", func(d *renderer.Options, s renderer.Options) { d.HostNetwork = s.HostNetwork },
		func(o renderer.Options) []string {
			if *o.HostNetwork == *renderer.DefaultOptions().HostNetwork {
				return nil
			}
			return []string{"--host-network=" + strconv.FormatBool(*o.HostNetwork)}
		}},
	{"set-arg", "setArgs", func(d *renderer.Options, s renderer.Options) { d.SetArgs = s.SetArgs },
		func(o renderer.Options) []string { return prefixed("--set-arg=", o.SetArgs) }},
	{"remove-arg", "removeArgs", func(d *renderer.Options, s renderer.Options) { d.RemoveArgs = s.RemoveArgs },
		func(o renderer.Options) []string { return prefixed("--remove-arg=", o.RemoveArgs) }},
	{"leader-migration-config", "leaderMigrationConfig", func(d *renderer.Options, s renderer.Options) { d.LeaderMigrationConfig = s.LeaderMigrationConfig },
		func(o renderer.Options) []string {
			return nonDefault("--leader-migration-config=", o.LeaderMigrationConfig, renderer.DefaultOptions().LeaderMigrationConfig)
		}},
	{"leader-name", "leaderName", func(d *renderer.Options, s renderer.Options) { d.LeaderName = s.LeaderName },
		func(o renderer.Options) []string {
			return nonDefault("--leader-name=", o.LeaderName, renderer.DefaultOptions().LeaderName)
		}},
	{"kcm-user", "kcmUser", func(d *renderer.Options, s renderer.Options) { d.KCMUser = s.KCMUser },
		func(o renderer.Options) []string {
			return nonDefault("--kcm-user=", o.KCMUser, renderer.DefaultOptions().KCMUser)
		}},
	{"target", "target", func(d *renderer.Options, s renderer.Options) { d.Target = s.Target },
		func(o renderer.Options) []string { return nonDefault("--target=", o.Target, "") }},
}

func prefixed(prefix string, vs []string) []string {
	var out []string
	for _, v := range vs {
		out = append(out, prefix+v)
	}
	return out
}

func nonDefault(prefix, v, def string) []string {
	if v == def {
		return nil
	}
	return []string{prefix + v}
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
	for _, o := range recordedOptions {
		if _, ok := fields[o.key]; ok {
			given[o.flag] = true
		}
	}
	if _, ok := fields["kubeVersion"]; ok {
		given["kube-version"] = true
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
	for _, o := range recordedOptions {
		if given[o.flag] || !ok {
			continue
		}
		o.take(&opts, rec)
		taken = append(taken, o.spell(rec)...)
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
