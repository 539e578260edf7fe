package renderer

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// OptionsAnnotation records on the CCM workload's metadata the options it
// was rendered with, as JSON: what `check` reads to know the distribution
// and mode, and what the chart wrapper's upgrade defaults to, so that an
// upgrade in the middle of a migration does not switch leader migration off
// unless asked. On the workload's metadata, not its pod template: changing
// it never rolls the pods.
const OptionsAnnotation = "aws-ccm-renderer.io/options"

// RecordOptions writes OptionsAnnotation.
type RecordOptions struct {
	Options Options
}

var _ kio.Filter = RecordOptions{}

func (f RecordOptions) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	b, err := json.Marshal(recordOf(f.Options))
	if err != nil {
		return nil, err
	}
	for _, rn := range nodes {
		if err := setAnnotation(rn, OptionsAnnotation, string(b)); err != nil {
			return nil, &patchError{Object: refOf(rn), Err: err}
		}
	}
	return nodes, nil
}

// record is what OptionsAnnotation holds: the options that shape the
// output, defaults left out. Versions describe the cluster, not the output,
// and are not recorded.
type record struct {
	Distro                distros.Distro `json:"distro"`
	Mode                  Mode           `json:"mode"`
	HostNetwork           *bool          `json:"hostNetwork,omitempty"`
	SetArgs               []string       `json:"setArgs,omitempty"`
	RemoveArgs            []string       `json:"removeArgs,omitempty"`
	LeaderMigrationConfig string         `json:"leaderMigrationConfig,omitempty"`
	LeaderName            string         `json:"leaderName,omitempty"`
	KCMUser               string         `json:"kcmUser,omitempty"`
	Target                string         `json:"target,omitempty"`
	TokenScope            TokenScope     `json:"tokenScope,omitempty"`
	GuardImage            string         `json:"guardImage,omitempty"`
}

func recordOf(o Options) record {
	d := DefaultOptions()
	r := record{Distro: o.Distro, Mode: o.Mode, SetArgs: o.SetArgs, RemoveArgs: o.RemoveArgs, Target: o.Target, GuardImage: o.GuardImage}
	if o.TokenScope != d.TokenScope {
		r.TokenScope = o.TokenScope
	}
	if *o.HostNetwork != *d.HostNetwork {
		r.HostNetwork = o.HostNetwork
	}
	if o.Mode == ModeMigrate {
		if o.LeaderMigrationConfig != d.LeaderMigrationConfig {
			r.LeaderMigrationConfig = o.LeaderMigrationConfig
		}
		if o.LeaderName != d.LeaderName {
			r.LeaderName = o.LeaderName
		}
		if o.KCMUser != d.KCMUser {
			r.KCMUser = o.KCMUser
		}
	}
	return r
}

// RecordedOptions reads the options a rendered workload records. ok is
// false when it records none (rendered otherwise, or by an older renderer).
func RecordedOptions(workload *yaml.RNode) (o Options, ok bool, err error) {
	v := workload.GetAnnotations()[OptionsAnnotation]
	if v == "" {
		return Options{}, false, nil
	}
	o, err = ParseRecordedOptions(v)
	return o, err == nil, err
}

// ParseRecordedOptions reads OptionsAnnotation's value; what it does not
// record is the default, but for the distribution and the mode, which are
// "" when it lacks them.
func ParseRecordedOptions(value string) (Options, error) {
	var r record
	if err := json.Unmarshal([]byte(value), &r); err != nil {
		return Options{}, fmt.Errorf("annotation %s: %w", OptionsAnnotation, err)
	}
	o := DefaultOptions()
	o.Distro, o.Mode, o.SetArgs, o.RemoveArgs, o.Target, o.TokenScope, o.GuardImage = r.Distro, r.Mode, r.SetArgs, r.RemoveArgs, r.Target, r.TokenScope, r.GuardImage
	if r.HostNetwork != nil {
		o.HostNetwork = r.HostNetwork
	}
	if r.LeaderMigrationConfig != "" {
		o.LeaderMigrationConfig = r.LeaderMigrationConfig
	}
	if r.LeaderName != "" {
		o.LeaderName = r.LeaderName
	}
	if r.KCMUser != "" {
		o.KCMUser = r.KCMUser
	}
	return o, nil
}
