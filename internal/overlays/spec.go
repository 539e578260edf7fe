package overlays

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Spec says what the generators write: the renderer's options every file
// is rendered with, which distributions and modes, the CCM image tag they
// pin, and where they go (for the command their headers give, which
// regenerates them). The zero Spec but for Options is what the repository
// ships: every distribution in each of its modes, migrate mode pinned to
// the CCM of the last minor that migrates.
type Spec struct {
	// Options every component is rendered with; their Distro and Mode are
	// set per component from Distros and Modes.
	Options renderer.Options
	// Distros to write; none: every distribution.
	Distros []distros.Distro
	// Modes to write; none: every mode. A distribution without migrate
	// mode (K3s) gets only install.
	Modes []renderer.Mode
	// ImageTag is the CCM image tag to pin. When "", migrate mode pins
	// the release of the cluster's minor (Options.KubeVersion's, else the
	// last minor with the in-tree provider) and install mode pins the
	// release of Options.KubeVersion's minor when it is given, else keeps
	// the chart's default image.
	ImageTag string
	// Out is the output directory as the command names it.
	Out string
}

// FlagImageTag is the generators' own flag for Spec.ImageTag.
const FlagImageTag = "image-tag"

// NotTaken are the renderer's options the generators do not take: the
// input is the upstream chart's default output, whose workload they know
// and whose CCM is the image they pin.
var NotTaken = []renderer.Opt{renderer.OptTarget, renderer.OptAllowMissingWorkload, renderer.OptCCMVersion}

// Taken returns the renderer's options the generators take, in
// renderer.OptionTable's order.
func Taken() []renderer.Opt {
	var ops []renderer.Opt
	for _, op := range renderer.OptionTable {
		if !slices.Contains(NotTaken, op.Opt) {
			ops = append(ops, op.Opt)
		}
	}
	return ops
}

// DefaultSpec is what the repository ships, written to out.
func DefaultSpec(out string) Spec { return Spec{Options: renderer.DefaultOptions(), Out: out} }

// component is one distribution and mode.
type component struct {
	distro distros.Distro
	mode   renderer.Mode
}

func (c component) path() string { return Component(c.distro, c.mode) }

// all returns the distributions and modes the spec selects, each with the
// modes its profile has, in order. A selection that leaves nothing (K3s in
// migrate mode) is the renderer's usage error.
func (s Spec) all() ([]component, error) {
	var out []component
	for _, d := range distros.All {
		if len(s.Distros) > 0 && !slices.Contains(s.Distros, d) {
			continue
		}
		p, ok := distros.RecordOf(d)
		if !ok {
			continue
		}
		for _, m := range renderer.ModesOf(p) {
			if len(s.Modes) == 0 || slices.Contains(s.Modes, m) {
				out = append(out, component{d, m})
			}
		}
	}
	if len(out) == 0 {
		o := s.Options
		if len(s.Distros) > 0 {
			o.Distro = s.Distros[0]
		}
		if len(s.Modes) > 0 {
			o.Mode = s.Modes[0]
		}
		if err := o.Validate(); err != nil {
			return nil, err
		}
		return nil, &renderer.UsageError{Err: fmt.Errorf("no distribution and mode selected")}
	}
	return out, nil
}

// Directories returns the <distro>/<mode> directories the spec owns: those
// it writes and those of its distributions and modes that no longer exist
// (K3s's migrate), which writing removes.
func (s Spec) Directories() []string {
	var dirs []string
	for _, d := range distros.All {
		for _, m := range renderer.Modes {
			if (len(s.Distros) == 0 || slices.Contains(s.Distros, d)) && (len(s.Modes) == 0 || slices.Contains(s.Modes, m)) {
				dirs = append(dirs, Component(d, m))
			}
		}
	}
	return dirs
}

// addComponents adds to files, under <distro>/<mode>/, the files write
// makes of each component the upstream chart's defaults rendered for it.
func (s Spec) addComponents(files map[string][]byte, all []component,
	write func(s Spec, r *upstream.Rendered, tag string) (map[string][]byte, error)) error {
	for _, c := range all {
		tag, err := s.tag(c)
		if err != nil {
			return err
		}
		r, err := s.render(c, tag)
		if err != nil {
			return err
		}
		comp, err := write(s, r, tag)
		if err != nil {
			return fmt.Errorf("%s: %w", c.path(), err)
		}
		for name, b := range comp {
			files[c.path()+"/"+name] = b
		}
	}
	return nil
}

// render renders the upstream chart's defaults for one component. What the
// renderer refuses is the spec's options, a usage error.
// A component that pins no CCM (install mode without --kube-version or
// --image-tag) deploys whichever image the chart's values say, so its
// guard reads the CCM's version from its pod (--ccm-version=auto) instead
// of judging the chart's default.
func (s Spec) render(c component, tag string) (*upstream.Rendered, error) {
	r, err := upstream.RenderTag(s.options(c), tag)
	var in *renderer.InputError
	if errors.As(err, &in) {
		return nil, &renderer.UsageError{Err: in.Err}
	}
	if err == nil && tag == "" && s.Options.GuardImage != "" {
		err = r.DaemonSet.PipeE(yaml.Lookup("spec", "template", "spec", "initContainers", "[name="+renderer.GuardContainer+"]", "args"),
			yaml.FilterFunc(func(args *yaml.RNode) (*yaml.RNode, error) {
				for _, a := range args.YNode().Content {
					if strings.HasPrefix(a.Value, renderer.GuardCCMVersionFlag+"=") {
						a.Value = renderer.GuardCCMVersionFlag + "=" + renderer.GuardAutoVersion
					}
				}
				return args, nil
			}))
	}
	return r, err
}

// options returns the renderer's options for one component. The migration
// lease's name is for the migrate components: the renderer refuses it in
// install mode.
func (s Spec) options(c component) renderer.Options {
	o := s.Options
	o.Distro, o.Mode = c.distro, c.mode
	if c.mode == renderer.ModeInstall {
		o.LeaderName = renderer.DefaultLeaderName
	}
	return o
}

// tag returns the CCM image tag a component pins; "" for the chart's
// default.
func (s Spec) tag(c component) (string, error) {
	if s.ImageTag != "" {
		pin, err := upstream.Pinned(s.ImageTag)
		if err != nil {
			return "", &renderer.UsageError{Err: fmt.Errorf("--%s: %w", FlagImageTag, err)}
		}
		return pin, nil
	}
	minor := -1
	if s.Options.KubeVersion != "" {
		v, err := kubeversion.Parse(s.Options.KubeVersion)
		if err != nil {
			return "", &renderer.UsageError{Option: renderer.OptKubeVersion, Err: err}
		}
		minor = int(v.Minor())
	} else if c.mode == renderer.ModeMigrate {
		minor = releases.LastInTreeMinor
	}
	if minor < 0 {
		return "", nil
	}
	tag, ok := releases.Latest(minor)
	if !ok {
		return "", &renderer.UsageError{Err: fmt.Errorf("no CCM release of Kubernetes 1.%d is known to be promoted to registry.k8s.io: pin one with --%s", minor, FlagImageTag)}
	}
	pin, err := upstream.Pinned(tag)
	if err != nil {
		return "", &renderer.UsageError{Err: fmt.Errorf("the CCM of 1.%d: %w (--%s)", minor, err, FlagImageTag)}
	}
	return pin, nil
}

// Command returns the command that writes what the spec writes, in the
// given format: the options given, as flags.
func (s Spec) Command(format string) string {
	args := []string{"aws-ccm-renderer", "overlays"}
	if format != FormatKustomize {
		args = append(args, "--format="+format)
	}
	args = append(args, "--out="+s.Out)
	for _, d := range s.Distros {
		args = append(args, renderer.FlagArg(renderer.OptDistro, string(d)))
	}
	for _, m := range s.Modes {
		args = append(args, renderer.FlagArg(renderer.OptMode, string(m)))
	}
	var ops []renderer.Opt
	for _, op := range Taken() {
		if op != renderer.OptDistro && op != renderer.OptMode {
			ops = append(ops, op)
		}
	}
	args = append(args, renderer.FlagArgs(s.Options, ops...)...)
	if s.ImageTag != "" {
		args = append(args, "--"+FlagImageTag+"="+s.ImageTag)
	}
	for i, a := range args {
		args[i] = safetext.ShellWord(a)
	}
	return strings.Join(args, " ")
}

// Formats of the generators.
const (
	FormatKustomize = "kustomize"
	FormatFlux      = "flux"
)

// header starts every generated YAML file: what it was made from and the
// command that regenerates it.
func (s Spec) header(format string, o renderer.Options, tag, docs string) string {
	what := ""
	if o.Distro != "" {
		what = fmt.Sprintf(" (--distro=%s --mode=%s", o.Distro, o.Mode)
		if tag != "" {
			what += ", the CCM " + tag
		}
		what += ")"
	}
	return comment(fmt.Sprintf("Generated by aws-ccm-renderer from its own output for the upstream chart%s.\n"+
		"Regenerate it rather than edit it, with the options you need (see %s):\n  %s", what, docs, s.Command(format)))
}

// comment writes text as YAML comment lines, "# " before each of its
// lines, with whatever control character it holds escaped
// (safetext.Escape): nothing in it can end the comment and become YAML.
func comment(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("# " + safetext.Escape(line) + "\n")
	}
	return b.String()
}
