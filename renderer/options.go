package renderer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Mode says where the cluster is in its move to the external cloud provider.
type Mode string

const (
	// ModeInstall: the CCM is the only cloud controller (fresh install, or
	// after a migration). Leader migration is switched off.
	ModeInstall Mode = "install"
	// ModeMigrate: the in-tree kube-controller-manager may still run its
	// cloud controllers; leader migration hands them over one at a time.
	ModeMigrate Mode = "migrate"
)

// Modes lists every accepted --mode value.
var Modes = []Mode{ModeInstall, ModeMigrate}

// Leader migration configuration sources.
const (
	// LeaderMigrationRendered ships an explicit LeaderMigrationConfiguration
	// naming the CCM's controllers (current and pre-1.28 names).
	LeaderMigrationRendered = "rendered"
	// LeaderMigrationDefault relies on the CCM's built-in default, whose
	// controller names do not match a CCM built on Kubernetes >= 1.28
	// libraries: its service controller then starts outside the lock.
	LeaderMigrationDefault = "default"

	// DefaultLeaderName is the lease the in-tree kube-controller-manager and
	// the CCM share during a migration.
	DefaultLeaderName = "cloud-provider-extraction-migration"
)

// Options select what the renderer writes. The zero value is not valid; start
// from DefaultOptions.
type Options struct {
	Distro      Distro `yaml:"distro,omitempty" json:"distro,omitempty"`
	Mode        Mode   `yaml:"mode,omitempty" json:"mode,omitempty"`
	HostNetwork *bool  `yaml:"hostNetwork,omitempty" json:"hostNetwork,omitempty"`
	// SetArgs are "FLAG=VALUE" pairs merged into the CCM container's args by
	// flag name ("v=4" and "--v=4" are the same).
	SetArgs []string `yaml:"setArgs,omitempty" json:"setArgs,omitempty"`
	// RemoveArgs are flag names removed from the CCM container's args.
	RemoveArgs []string `yaml:"removeArgs,omitempty" json:"removeArgs,omitempty"`
	// AllowMissingWorkload passes input without a CCM workload through
	// unchanged instead of failing.
	AllowMissingWorkload bool `yaml:"allowMissingWorkload,omitempty" json:"allowMissingWorkload,omitempty"`
	// LeaderMigrationConfig is "rendered" (default) or "default"; only used
	// in migrate mode.
	LeaderMigrationConfig string `yaml:"leaderMigrationConfig,omitempty" json:"leaderMigrationConfig,omitempty"`
	// LeaderName overrides the migration lease name in the rendered config.
	LeaderName string `yaml:"leaderName,omitempty" json:"leaderName,omitempty"`
}

// DefaultOptions returns the defaults of the command line.
func DefaultOptions() Options {
	t := true
	return Options{
		Distro:                DistroAuto,
		Mode:                  ModeInstall,
		HostNetwork:           &t,
		LeaderMigrationConfig: LeaderMigrationRendered,
		LeaderName:            DefaultLeaderName,
	}
}

// ConfigAPIVersion and ConfigKind identify the renderer's own config file,
// which --config reads and the KRM function takes as functionConfig.
const (
	ConfigAPIVersion = "aws-ccm-renderer.io/v1alpha1"
	ConfigKind       = "RendererConfig"
)

// Config is the renderer's config file: the command line's options as YAML.
type Config struct {
	APIVersion string `yaml:"apiVersion" json:"apiVersion"`
	Kind       string `yaml:"kind" json:"kind"`
	Metadata   struct {
		Name        string            `yaml:"name,omitempty" json:"name,omitempty"`
		Annotations map[string]string `yaml:"annotations,omitempty" json:"annotations,omitempty"`
	} `yaml:"metadata,omitempty" json:"metadata,omitempty"`
	Options `yaml:",inline" json:",inline"`
}

// ReadConfigFile reads a RendererConfig file; "-" is not accepted because
// stdin carries the manifests.
func ReadConfigFile(path string) (Options, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Options{}, usageErrorf("--config: %v", err)
	}
	o, err := ParseConfig(data)
	if err != nil {
		return Options{}, usageErrorf("--config %s: %v", path, err)
	}
	return o, nil
}

// ParseConfig decodes a RendererConfig document strictly: unknown fields,
// a wrong kind and a second document are errors. Fields it does not set
// keep their defaults.
func ParseConfig(data []byte) (Options, error) {
	c := Config{Options: DefaultOptions()}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return Options{}, errors.New("empty config")
		}
		return Options{}, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Options{}, errors.New("a config file holds one document")
	}
	if c.APIVersion != ConfigAPIVersion || c.Kind != ConfigKind {
		return Options{}, fmt.Errorf("want apiVersion %s and kind %s, got %q and %q",
			ConfigAPIVersion, ConfigKind, c.APIVersion, c.Kind)
	}
	return c.Options, nil
}

// forcedArgs are the flags every rendered CCM runs with.
var forcedArgs = []flagValue{
	{name: "cloud-provider", value: "aws"},
	{name: "use-service-account-credentials", value: "true"},
	{name: "configure-cloud-routes", value: "false"},
}

const (
	flagEnableLeaderMigration = "enable-leader-migration"
	flagLeaderMigrationConfig = "leader-migration-config"
)

// flagValue is one flag of a merge: set name to value, or remove name.
type flagValue struct {
	name  string
	value string
}

// Validate checks the options and their combinations. It returns a
// *UsageError naming the first problem.
func (o Options) Validate() error {
	if _, ok := ProfileFor(o.Distro); !ok {
		return usageErrorf("unknown distro %q: use one of %s", o.Distro, joinValues(Distros))
	}
	if o.Mode != ModeInstall && o.Mode != ModeMigrate {
		return usageErrorf("unknown mode %q: use one of %s", o.Mode, joinValues(Modes))
	}
	if o.HostNetwork == nil {
		return usageErrorf("hostNetwork must be true or false")
	}
	switch o.LeaderMigrationConfig {
	case LeaderMigrationRendered, LeaderMigrationDefault:
	default:
		return usageErrorf("unknown leader migration config %q: use %s or %s",
			o.LeaderMigrationConfig, LeaderMigrationRendered, LeaderMigrationDefault)
	}
	if o.LeaderName == "" {
		return usageErrorf("the leader name must not be empty")
	}
	if o.Mode == ModeInstall && o.LeaderName != DefaultLeaderName {
		return usageErrorf("--leader-name only applies to --mode=migrate")
	}
	if o.Mode == ModeMigrate && o.LeaderMigrationConfig == LeaderMigrationDefault && o.LeaderName != DefaultLeaderName {
		return usageErrorf("--leader-name needs the rendered leader migration config, not the built-in default")
	}
	_, err := o.argMerge()
	return err
}

// argMerge turns the options into the ordered flag operations of the args
// patch, rejecting options that contradict each other or the renderer.
func (o Options) argMerge() (argOps, error) {
	var ops argOps
	seen := map[string]string{}
	for _, s := range o.SetArgs {
		name, value, ok := strings.Cut(s, "=")
		name = strings.TrimLeft(name, "-")
		if !ok || !validFlagName(name) {
			return ops, usageErrorf("--set-arg %q: want FLAG=VALUE, e.g. --set-arg=v=4", s)
		}
		if err := o.checkManaged("--set-arg", name, value); err != nil {
			return ops, err
		}
		if prev, dup := seen[name]; dup {
			return ops, usageErrorf("--set-arg %s is given twice (%s and %s)", name, prev, s)
		}
		seen[name] = s
		ops.set = append(ops.set, flagValue{name: name, value: value})
	}
	for _, s := range o.RemoveArgs {
		name := strings.TrimLeft(s, "-")
		if i := strings.IndexByte(name, '='); i >= 0 || !validFlagName(name) {
			return ops, usageErrorf("--remove-arg %q: want a flag name, e.g. --remove-arg=v", s)
		}
		if prev, dup := seen[name]; dup {
			return ops, usageErrorf("--remove-arg %s contradicts %s", s, prev)
		}
		if err := o.checkManaged("--remove-arg", name, ""); err != nil {
			return ops, err
		}
		seen[name] = "--remove-arg " + s
		ops.remove = append(ops.remove, name)
	}
	return ops, nil
}

// checkManaged rejects user flags that would undo what the renderer needs.
func (o Options) checkManaged(option, name, value string) error {
	for _, f := range forcedArgs {
		if f.name == name && (option == "--remove-arg" || value != f.value) {
			return usageErrorf("%s %s: the CCM must run with --%s=%s on a cluster moving off the in-tree provider; drop this option",
				option, name, f.name, f.value)
		}
	}
	if name == flagEnableLeaderMigration || name == flagLeaderMigrationConfig {
		return usageErrorf("%s %s: leader migration follows --mode (migrate adds it, install removes it); drop this option", option, name)
	}
	return nil
}

type argOps struct {
	set    []flagValue
	remove []string
}

func validFlagName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

func joinValues[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
