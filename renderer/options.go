package renderer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
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

	// DefaultKCMUser is the identity the in-tree kube-controller-manager
	// authenticates as on every distribution with an in-tree provider.
	DefaultKCMUser = "system:kube-controller-manager"
)

// Options select what the renderer writes. The zero value is not valid; start
// from DefaultOptions.
type Options struct {
	Distro      Distro `yaml:"distro,omitempty" json:"distro,omitempty"`
	Mode        Mode   `yaml:"mode,omitempty" json:"mode,omitempty"`
	HostNetwork *bool  `yaml:"hostNetwork,omitempty" json:"hostNetwork,omitempty"`
	// SetArgs are "FLAG=VALUE" pairs merged into the CCM's command line by
	// flag name ("v=4" and "--v=4" are the same).
	SetArgs []string `yaml:"setArgs,omitempty" json:"setArgs,omitempty"`
	// RemoveArgs are flag names removed from the CCM's command line.
	RemoveArgs []string `yaml:"removeArgs,omitempty" json:"removeArgs,omitempty"`
	// AllowMissingWorkload passes input without a CCM workload through
	// unchanged instead of failing.
	AllowMissingWorkload bool `yaml:"allowMissingWorkload,omitempty" json:"allowMissingWorkload,omitempty"`
	// LeaderMigrationConfig is "rendered" (default) or "default"; only used
	// in migrate mode.
	LeaderMigrationConfig string `yaml:"leaderMigrationConfig,omitempty" json:"leaderMigrationConfig,omitempty"`
	// LeaderName is the migration lease's name.
	LeaderName string `yaml:"leaderName,omitempty" json:"leaderName,omitempty"`
	// Target names the CCM's workload, KIND/NAMESPACE/NAME (or KIND/NAME),
	// for builds the renderer does not recognise by binary or image.
	Target string `yaml:"target,omitempty" json:"target,omitempty"`
	// KCMUser is the identity of the in-tree kube-controller-manager, which
	// migrate mode lets hold the migration lease.
	KCMUser string `yaml:"kcmUser,omitempty" json:"kcmUser,omitempty"`
	// KubeVersion is the cluster's Kubernetes version, when known: the CCM's
	// version is checked against it.
	KubeVersion string `yaml:"kubeVersion,omitempty" json:"kubeVersion,omitempty"`
	// CCMVersion is the CCM's version when its image tag does not tell
	// (an untagged or digest-pinned image).
	CCMVersion string `yaml:"ccmVersion,omitempty" json:"ccmVersion,omitempty"`
	// AllowVersionSkew lets migrate mode render, with a warning, what the
	// version check refuses: a CCM of another minor than the cluster's, a
	// CCM of 1.27 or later when the cluster's version is not known, a
	// cluster with no in-tree provider.
	AllowVersionSkew bool `yaml:"allowVersionSkew,omitempty" json:"allowVersionSkew,omitempty"`
	// Strict makes every warning an error: where nobody reads a
	// post-renderer's stderr (Helm without a terminal, GitOps controllers),
	// a render that would warn fails instead, saying why.
	Strict bool `yaml:"strict,omitempty" json:"strict,omitempty"`
	// TokenScope says for which service accounts the CCM's own may create
	// tokens: TokenScopeCluster (or empty) leaves the chart's grant,
	// TokenScopeControllers narrows it.
	TokenScope TokenScope `yaml:"tokenScope,omitempty" json:"tokenScope,omitempty"`
	// GuardImage, when set, adds the guard (aws-ccm-renderer guard) as an
	// init container of the CCM's pods, from this image, pinned by digest,
	// with a Role for what it reads (Guard, GuardRBAC).
	GuardImage string `yaml:"guardImage,omitempty" json:"guardImage,omitempty"`
}

// TokenScope is how far the CCM's service account may create tokens.
type TokenScope string

const (
	// TokenScopeCluster: as the chart grants it, for any service account in
	// any namespace (the default).
	TokenScopeCluster TokenScope = "cluster"
	// TokenScopeControllers: for its controllers' service accounts in
	// kube-system alone (ControllerAccounts), by name, through a Role there
	// (TokenRBAC); the CCM's own roles lose their wider grant. A wider grant
	// in a role the renderer may not edit (shared, aggregated, not in the
	// input) is an error.
	TokenScopeControllers TokenScope = "controllers"
)

// TokenScopes lists every accepted token scope.
var TokenScopes = []TokenScope{TokenScopeCluster, TokenScopeControllers}

// narrow reports whether the options narrow the token grant.
func (o Options) narrow() bool { return o.TokenScope == TokenScopeControllers }

// Option is one of the renderer's options, as every front end names it: the
// one home of its spellings. The flags, the config file's and the KRM
// function's keys, the options the workload records (OptionsAnnotation) and
// how messages name an option (Spelling) all come from OptionTable.
type Option struct {
	// Opt is the option's key in the config file, the KRM function's
	// ConfigMap and OptionsAnnotation, and its field's yaml and json tag
	// in Options.
	Opt Opt
	// Flag is its command-line flag, without dashes.
	Flag string
	// Usage is the flag's help.
	Usage string
	// Values are the values the flag completes to; none for free text.
	Values []string
	// Recorded options are kept in OptionsAnnotation: the chart wrapper's
	// upgrade defaults to them.
	Recorded bool
	// Said options are spelled when recorded even at their default value
	// (the distribution and the mode always matter to the reader).
	Said bool
	// field points into an Options at the option's field: a *string (or a
	// string type), **bool, *bool or *[]string.
	field func(*Options) any
}

// OptionTable lists every option, in the order help texts and error
// messages list them.
var OptionTable = []Option{
	{Opt: OptDistro, Flag: "distro", Usage: "distribution: " + Alternatives(DistroValues(records), "or"), Values: stringsOf(Distros),
		Recorded: true, Said: true, field: func(o *Options) any { return &o.Distro }},
	{Opt: OptMode, Flag: "mode", Usage: "install (the CCM alone) or migrate (leader migration with the in-tree controller manager)",
		Values: stringsOf(Modes), Recorded: true, Said: true, field: func(o *Options) any { return &o.Mode }},
	{Opt: OptHostNetwork, Flag: "host-network", Usage: "run the CCM in the host network", Recorded: true,
		field: func(o *Options) any { return &o.HostNetwork }},
	{Opt: OptSetArgs, Flag: "set-arg", Usage: "set a CCM flag, FLAG=VALUE (repeatable), e.g. --set-arg=v=4", Recorded: true,
		field: func(o *Options) any { return &o.SetArgs }},
	{Opt: OptRemoveArgs, Flag: "remove-arg", Usage: "remove a CCM flag by name (repeatable), e.g. --remove-arg=v", Recorded: true,
		field: func(o *Options) any { return &o.RemoveArgs }},
	{Opt: OptAllowMissingWorkload, Flag: "allow-missing-workload",
		Usage: "pass input without a CCM DaemonSet or Deployment through unchanged instead of failing",
		field: func(o *Options) any { return &o.AllowMissingWorkload }},
	{Opt: OptLeaderMigrationConfig, Flag: "leader-migration-config",
		Usage:  "in migrate mode: rendered (a ConfigMap naming the CCM's controllers) or default (the CCM's built-in config; unsafe, its service controller starts outside the migration lock)",
		Values: []string{LeaderMigrationRendered, LeaderMigrationDefault}, Recorded: true,
		field: func(o *Options) any { return &o.LeaderMigrationConfig }},
	{Opt: OptLeaderName, Flag: "leader-name", Usage: "in migrate mode: the lease the in-tree controller manager and the CCM share",
		Recorded: true, field: func(o *Options) any { return &o.LeaderName }},
	{Opt: OptTarget, Flag: "target",
		Usage:    "the CCM's workload, KIND/NAMESPACE/NAME, for a build the renderer does not recognise by its executable or image",
		Recorded: true, field: func(o *Options) any { return &o.Target }},
	{Opt: OptKCMUser, Flag: "kcm-user",
		Usage:    "in migrate mode: the in-tree kube-controller-manager's identity, which may then hold the migration lease",
		Recorded: true, field: func(o *Options) any { return &o.KCMUser }},
	{Opt: OptKubeVersion, Flag: "kube-version",
		Usage: "the cluster's Kubernetes version (e.g. v1.26.15): the CCM's version is checked against it",
		field: func(o *Options) any { return &o.KubeVersion }},
	{Opt: OptCCMVersion, Flag: "ccm-version",
		Usage: "the CCM's version when its image tag does not tell (an untagged or digest-pinned image)",
		field: func(o *Options) any { return &o.CCMVersion }},
	{Opt: OptAllowVersionSkew, Flag: "allow-version-skew", Usage: "in migrate mode, render anyway (with a warning) a CCM of another minor than the cluster's (--kube-version), of 1.27 or later, or a cluster with no in-tree provider",
		field: func(o *Options) any { return &o.AllowVersionSkew }},
	{Opt: OptStrict, Flag: "strict",
		Usage: "make every warning an error (exit 1, nothing on stdout): for CI and GitOps, where nobody reads a post-renderer's stderr",
		field: func(o *Options) any { return &o.Strict }},
	{Opt: OptTokenScope, Flag: "token-scope",
		Usage:  "for whom the CCM's account may create tokens: cluster (as the chart grants it: any account in any namespace) or controllers (its controllers' accounts in kube-system, by name)",
		Values: stringsOf(TokenScopes), Recorded: true, field: func(o *Options) any { return &o.TokenScope }},
	{Opt: OptGuardImage, Flag: "guard-image",
		Usage:    "add the guard, an init container that holds the CCM back while starting it would do harm (aws-ccm-renderer guard), from this image pinned by digest (REPO@sha256:...), e.g. the Argo CD sidecar image's",
		Recorded: true, field: func(o *Options) any { return &o.GuardImage }},
}

// OptionOf returns an option's entry in OptionTable.
func OptionOf(o Opt) (Option, bool) {
	for _, op := range OptionTable {
		if op.Opt == o {
			return op, true
		}
	}
	return Option{}, false
}

// IsList tells whether the option takes a list (given once per item).
func (op Option) IsList() bool { _, ok := op.field(&Options{}).(*[]string); return ok }

// IsBool tells whether the option is true or false.
func (op Option) IsBool() bool {
	switch op.field(&Options{}).(type) {
	case *bool, **bool:
		return true
	}
	return false
}

// Set sets the option in o from its text, as a flag or a ConfigMap value
// gives it: a list option gets one more item.
func (op Option) Set(o *Options, text string) error {
	switch p := op.field(o).(type) {
	case *[]string:
		*p = append(*p, text)
		return nil
	case *bool, **bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return errors.New("want true or false")
		}
		if pp, ok := p.(**bool); ok {
			*pp = &b
		} else {
			*p.(*bool) = b
		}
		return nil
	}
	reflect.ValueOf(op.field(o)).Elem().SetString(text)
	return nil
}

// Take copies the option's value from src to dst.
func (op Option) Take(dst *Options, src Options) {
	reflect.ValueOf(op.field(dst)).Elem().Set(reflect.ValueOf(op.field(&src)).Elem())
}

// Text returns the option's value in o as a flag or ConfigMap value writes
// it; a list option's items each.
func (op Option) Text(o Options) []string {
	switch p := op.field(&o).(type) {
	case *[]string:
		return *p
	case **bool:
		if *p == nil {
			return nil
		}
		return []string{strconv.FormatBool(**p)}
	case *bool:
		return []string{strconv.FormatBool(*p)}
	}
	return []string{reflect.ValueOf(op.field(&o)).Elem().String()}
}

// Given tells whether o sets the option to other than its default.
func (op Option) Given(o Options) bool {
	return !slices.Equal(op.Text(o), op.Text(DefaultOptions()))
}

// FlagArgs writes the options ops of o as command-line flags
// ("--distro=rke2"), leaving out those at their default unless Said.
func FlagArgs(o Options, ops ...Opt) []string {
	var out []string
	for _, key := range ops {
		op, ok := OptionOf(key)
		if !ok || (!op.Said && !op.Given(o)) {
			continue
		}
		for _, v := range op.Text(o) {
			out = append(out, FlagArg(key, v))
		}
	}
	return out
}

// FlagArg writes an option set to a value as a command-line flag:
// "--distro=rke2".
func FlagArg(o Opt, value string) string { return FlagSpelling(o) + "=" + value }

func stringsOf[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
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
		KCMUser:               DefaultKCMUser,
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
		Labels      map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	} `yaml:"metadata,omitempty" json:"metadata,omitempty"`
	Options `yaml:",inline" json:",inline"`
}

// ReadConfigFile reads a RendererConfig file; "-" is not accepted because
// stdin carries the manifests.
func ReadConfigFile(path string) (Options, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Options{}, &UsageError{Err: fmt.Errorf("--config: %w", err)}
	}
	o, err := ParseConfig(data)
	if err != nil {
		return Options{}, &UsageError{Err: fmt.Errorf("--config %s: %w", path, err)}
	}
	return o, nil
}

// ParseConfig decodes a RendererConfig document strictly: unknown keys
// (named with the known ones they most likely meant), values of the wrong
// kind, a wrong kind and a second document are errors, said in the file's
// own words. Fields it does not set keep their defaults.
func ParseConfig(data []byte) (Options, error) {
	c := Config{Options: DefaultOptions()}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Options{}, errors.New("empty config")
		}
		return Options{}, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Options{}, errors.New("a config file holds one document")
	}
	if err := checkConfigKeys(&doc); err != nil {
		return Options{}, err
	}
	if err := doc.Decode(&c); err != nil {
		return Options{}, err
	}
	if c.APIVersion != ConfigAPIVersion || c.Kind != ConfigKind {
		return Options{}, fmt.Errorf("want apiVersion %s and kind %s, got %q and %q",
			ConfigAPIVersion, ConfigKind, c.APIVersion, c.Kind)
	}
	return c.Options, nil
}

// configKeys are the keys of a RendererConfig besides the options'.
var configKeys = []string{"apiVersion", "kind", "metadata"}

// ConfigKeys lists the keys a RendererConfig takes: apiVersion, kind,
// metadata and the options' (as OptionTable names them).
func ConfigKeys() []string {
	keys := slices.Clone(configKeys)
	for _, op := range OptionTable {
		keys = append(keys, string(op.Opt))
	}
	return keys
}

// checkConfigKeys refuses, by line, a key a RendererConfig does not have
// (saying which it most likely meant) and an option's value of the wrong
// kind, before the document is decoded into Config.
func checkConfigKeys(doc *yaml.Node) error {
	m := doc
	if m.Kind == yaml.DocumentNode && len(m.Content) == 1 {
		m = m.Content[0]
	}
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping of keys (apiVersion, kind, the options)", m.Line)
	}
	keys := ConfigKeys()
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			return fmt.Errorf("line %d: %s is given twice", k.Line, k.Value)
		}
		seen[k.Value] = true
		if k.Value == "metadata" {
			if err := checkMetadataKeys(v); err != nil {
				return err
			}
			continue
		}
		op, isOption := OptionOf(Opt(k.Value))
		if !slices.Contains(keys, k.Value) {
			return fmt.Errorf("line %d: unknown key %q%s; the keys: %s", k.Line, k.Value,
				DidYouMean(k.Value, keys, func(s string) string { return s }), strings.Join(keys, ", "))
		}
		if !isOption || v.Tag == "!!null" {
			continue
		}
		if err := checkOptionValue(op, v); err != nil {
			return fmt.Errorf("line %d: %s: %w", v.Line, k.Value, err)
		}
	}
	return nil
}

// checkOptionValue refuses a value of the wrong kind for an option.
func checkOptionValue(op Option, v *yaml.Node) error {
	switch {
	case op.IsList():
		if v.Kind != yaml.SequenceNode {
			return fmt.Errorf("want a list, e.g. %s: [%s]", op.Opt, exampleItem(op))
		}
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode {
				return fmt.Errorf("want a list of strings, e.g. %s: [%s]", op.Opt, exampleItem(op))
			}
		}
	case v.Kind != yaml.ScalarNode:
		return errors.New("want a single value, not a list or mapping")
	case op.IsBool():
		var b bool
		if v.Decode(&b) != nil {
			return fmt.Errorf("want true or false, got %q", v.Value)
		}
	}
	return nil
}

func exampleItem(op Option) string {
	if op.Opt == OptRemoveArgs {
		return "v"
	}
	return "v=4"
}

// metadataKeys are the keys a RendererConfig's metadata takes.
var metadataKeys = []string{"name", "annotations", "labels"}

func checkMetadataKeys(v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return nil // the decoder says what is wrong with it
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		if k := v.Content[i]; !slices.Contains(metadataKeys, k.Value) {
			return fmt.Errorf("line %d: unknown key metadata.%s%s; metadata's keys: %s", k.Line, k.Value,
				DidYouMean(k.Value, metadataKeys, func(s string) string { return "metadata." + s }), strings.Join(metadataKeys, ", "))
		}
	}
	return nil
}

// The flags the renderer manages.
const (
	flagCloudProvider         = "cloud-provider"
	flagServiceAccountCreds   = "use-service-account-credentials"
	flagCloudRoutes           = "configure-cloud-routes"
	flagEnableLeaderMigration = "enable-leader-migration"
	flagLeaderMigrationConfig = "leader-migration-config"
	flagFeatureGates          = "feature-gates"
	flagLeaseNamespace        = "leader-elect-resource-namespace"
)

// requiredArgs are the flags every rendered CCM runs with. A user may
// change the value of those with a risk (a warning says which) but not of
// those without: the CCM must be the AWS one.
var requiredArgs = []struct {
	name, value string
	risk        string // why another value is unusual; "" when none is allowed
}{
	{name: flagCloudProvider, value: "aws"},
	{name: flagServiceAccountCreds, value: "true", risk: "every CCM controller then runs with the CCM's own service account " +
		"and its permissions, not a service account of its own"},
	{name: flagCloudRoutes, value: "false", risk: "the CCM's route controller then writes pod CIDR routes into the VPC's " +
		"route tables; only clusters whose pod network relies on cloud routes want that"},
}

// Validate checks the options and their combinations. It returns a
// *UsageError naming the first problem.
func (o Options) Validate() error {
	_, err := o.check()
	return err
}

// check validates the options and returns warnings about values that are
// allowed but unusual.
func (o Options) check() (warnings []string, err error) {
	profile, ok := ProfileFor(o.Distro)
	if !ok {
		return nil, UnknownValue(OptDistro, string(o.Distro), stringsOf(Distros), DistroAliases)
	}
	if o.Mode != ModeInstall && o.Mode != ModeMigrate {
		return nil, UnknownValue(OptMode, string(o.Mode), stringsOf(Modes), nil)
	}
	if !slices.Contains(profile.Modes(), o.Mode) {
		return nil, usageErrorf(OptMode, "%s does not apply to %s: that distribution is built without the in-tree cloud providers, so no in-tree "+
			"controller manager hands over to the CCM; its move to the AWS CCM is a switch, step by step in "+
			"`aws-ccm-renderer plan --distro %s`: render with %s", o.Mode, OptValue{OptDistro, string(o.Distro)},
			o.Distro, OptValue{OptMode, string(ModeInstall)})
	}
	if o.HostNetwork == nil {
		return nil, usageErrorf(OptHostNetwork, "must be true or false")
	}
	switch o.LeaderMigrationConfig {
	case LeaderMigrationRendered, LeaderMigrationDefault:
	default:
		return nil, UnknownValue(OptLeaderMigrationConfig, o.LeaderMigrationConfig, []string{LeaderMigrationRendered, LeaderMigrationDefault}, nil)
	}
	if errs := validation.IsDNS1123Subdomain(o.LeaderName); len(errs) > 0 {
		return nil, usageErrorf(OptLeaderName, "%q is not a valid Lease name: %s", o.LeaderName, strings.Join(errs, "; "))
	}
	if o.Mode == ModeInstall && o.LeaderName != DefaultLeaderName {
		return nil, usageErrorf(OptLeaderName, "only applies to %s", OptValue{OptMode, string(ModeMigrate)})
	}
	if o.Mode == ModeMigrate && o.LeaderMigrationConfig == LeaderMigrationDefault && o.LeaderName != DefaultLeaderName {
		return nil, usageErrorf(OptLeaderName, "needs the rendered leader migration config, not the built-in default")
	}
	if o.KCMUser == "" {
		return nil, usageErrorf(OptKCMUser, "must not be empty")
	}
	if o.TokenScope != "" && !slices.Contains(TokenScopes, o.TokenScope) {
		return nil, usageErrorf(OptTokenScope, "%q is unknown: use one of %s", o.TokenScope, joinValues(TokenScopes))
	}
	if o.GuardImage != "" && !digestPinned.MatchString(o.GuardImage) {
		return nil, usageErrorf(OptGuardImage, "%q: pin the image by digest (REPO@sha256:<64 hex digits>): the guard runs in the CCM's pod with its service account", o.GuardImage)
	}
	if _, err := parseTarget(o.Target); err != nil {
		return nil, err
	}
	for _, v := range []struct {
		opt Opt
		s   string
	}{{OptKubeVersion, o.KubeVersion}, {OptCCMVersion, o.CCMVersion}} {
		if _, err := parseVersion(v.s); v.s != "" && err != nil {
			return nil, usageErrorf(v.opt, "%q: %v; write it as v1.26.15 or 1.26", v.s, err)
		}
	}
	flags, err := o.userFlags()
	if err != nil {
		return nil, err
	}
	for _, f := range flags {
		for _, r := range requiredArgs {
			if f.Name == r.name && !f.Remove && f.Value != r.value {
				warnings = append(warnings, fmt.Sprintf("--%s=%s: %s", f.Name, f.Value, r.risk))
			}
		}
	}
	return warnings, nil
}

// userFlags turns SetArgs and RemoveArgs into flag operations, rejecting
// those that contradict each other or undo what the renderer must do.
func (o Options) userFlags() ([]Flag, error) {
	var flags []Flag
	seen := map[string]string{}
	for _, s := range o.SetArgs {
		name, value, ok := strings.Cut(s, "=")
		name = strings.TrimLeft(name, "-")
		if !ok || !validFlagName(name) {
			return nil, usageErrorf(OptSetArgs, "%q: want FLAG=VALUE, e.g. %s", s, OptValue{OptSetArgs, "v=4"})
		}
		if err := checkManaged(OptSetArgs, name, value); err != nil {
			return nil, err
		}
		if prev, dup := seen[name]; dup {
			return nil, usageErrorf(OptSetArgs, "%s is given twice (%s and %s)", name, prev, s)
		}
		seen[name] = s
		flags = append(flags, Flag{Name: name, Value: value})
	}
	for _, s := range o.RemoveArgs {
		name := strings.TrimLeft(s, "-")
		if strings.IndexByte(name, '=') >= 0 || !validFlagName(name) {
			return nil, usageErrorf(OptRemoveArgs, "%q: want a flag name, e.g. %s", s, OptValue{OptRemoveArgs, "v"})
		}
		if prev, dup := seen[name]; dup {
			return nil, usageErrorf(OptRemoveArgs, "%s contradicts %s", s, prev)
		}
		if err := checkManaged(OptRemoveArgs, name, ""); err != nil {
			return nil, err
		}
		seen[name] = s
		flags = append(flags, Flag{Name: name, Remove: true})
	}
	return flags, nil
}

// checkManaged rejects user flags that would undo what the renderer needs.
func checkManaged(opt Opt, name, value string) error {
	for _, r := range requiredArgs {
		if r.name != name {
			continue
		}
		if opt == OptRemoveArgs && r.risk == "" {
			// No other value is allowed: no advice that the next
			// command would refuse.
			return usageErrorf(opt, "%s: the CCM must run with --%s=%s, which the renderer sets; drop this option",
				name, r.name, r.value)
		}
		if opt == OptRemoveArgs {
			return usageErrorf(opt, "%s: the renderer sets --%s=%s; to run the CCM with another value, use %s",
				name, r.name, r.value, OptValue{OptSetArgs, r.name + "=" + otherBool(r.value)})
		}
		if r.risk == "" && value != r.value {
			return usageErrorf(opt, "%s: the CCM must run with --%s=%s on a cluster moving off the in-tree provider; drop this option",
				name, r.name, r.value)
		}
	}
	switch name {
	case flagEnableLeaderMigration, flagLeaderMigrationConfig:
		return usageErrorf(opt, "%s: leader migration follows %s (migrate adds it, install removes it); drop this option", name, OptMode)
	}
	return nil
}

// otherBool is the other boolean value, as a flag's value.
func otherBool(v string) string {
	if v == "true" {
		return "false"
	}
	return "true"
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

func joinValues[T ~string](vs []T) string { return strings.Join(stringsOf(vs), ", ") }

// target is a parsed Options.Target.
type target struct {
	kind, namespace, name string
	anyNamespace          bool // KIND/NAME: the workload of that name in whatever namespace
}

func parseTarget(s string) (*target, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, "/")
	bad := func() error {
		return usageErrorf(OptTarget, "%q: want KIND/NAMESPACE/NAME (or KIND/NAME) of a DaemonSet or Deployment, e.g. %s",
			s, OptValue{OptTarget, "DaemonSet/kube-system/aws-cloud-controller-manager"})
	}
	if len(parts) < 2 || len(parts) > 3 || slices.Contains(parts, "") {
		return nil, bad()
	}
	t := &target{name: parts[len(parts)-1], anyNamespace: len(parts) == 2}
	if len(parts) == 3 {
		t.namespace = parts[1]
	}
	for k := range workloadKinds {
		if strings.EqualFold(parts[0], k) {
			t.kind = k
		}
	}
	if t.kind == "" {
		return nil, bad()
	}
	return t, nil
}

func (t *target) String() string {
	if t.anyNamespace {
		return t.kind + "/" + t.name
	}
	return t.kind + "/" + t.namespace + "/" + t.name
}

func (t *target) matches(r *ObjectRef) bool {
	return r.Kind == t.kind && r.Name == t.name && (t.anyNamespace || r.Namespace == t.namespace)
}
