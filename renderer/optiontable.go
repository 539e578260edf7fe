package renderer

import (
	"errors"
	"reflect"
	"slices"
	"strconv"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The option table: each option's key, flag, usage, completions and
// whether it is recorded, and the accessors to its field of Options. Set
// is the one parser of an option's text: the flags, the KRM function's
// ConfigMap and the Argo CD plugin's parameters (as flags) go through it;
// the config file is YAML, decoded in config.go.

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
	{Opt: OptDistro, Flag: "distro", Usage: "distribution: " + distros.Alternatives(distros.Values(distros.Records()), "or"), Values: stringsOf(distros.All),
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
		Usage: "make every warning an error, nothing on stdout (exit 1 for a warning about the input, 2 for one about the options): for CI and GitOps, where nobody reads a post-renderer's stderr",
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
