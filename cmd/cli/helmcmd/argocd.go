package helmcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	yaml "go.yaml.in/yaml/v3"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/cmd/cli"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/chartops"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

// ArgoCDParameter is a parameter of the Argo CD config management plugin
// (examples/argocd/plugin.yaml announces each in spec.parameters.static;
// integration/gitops holds the two to each other).
type ArgoCDParameter struct {
	Name string // as the Application names it
	// Env is the plugin env of the plugin's first version that means the
	// same (ARGOCD_ENV_<Env>), "" when there is none.
	Env     string
	Array   bool
	Default string // a string parameter's, when the Application does not set it
	// Opt is the renderer's option the parameter sets, "" when none:
	// RENDERER_ARGS may not set it too (argoRendererArgs).
	Opt renderer.Opt
}

// ArgoCDParameters are the plugin's parameters, in the order plugin.yaml
// announces them.
var ArgoCDParameters = []ArgoCDParameter{
	{Name: "distro", Env: "DISTRO", Default: string(distros.Auto), Opt: renderer.OptDistro},
	{Name: "mode", Env: "MODE", Default: string(renderer.ModeInstall), Opt: renderer.OptMode},
	{Name: "chart-version", Env: "CHART_VERSION", Default: upstream.LatestChartVersion},
	// The image tag it pins tells the renderer the CCM's version.
	{Name: "ccm-version", Opt: renderer.OptCCMVersion},
	{Name: "guard-image", Opt: renderer.OptGuardImage},
	{Name: "set-arg", Array: true, Opt: renderer.OptSetArgs},
	{Name: "remove-arg", Array: true, Opt: renderer.OptRemoveArgs},
	{Name: "helm-set", Array: true},
	{Name: "values-files", Array: true},
	{Name: "chart", Env: "CHART", Default: upstream.ChartName},
	{Name: "repo", Env: "REPO", Default: upstream.ChartRepo},
	{Name: "strict", Env: "STRICT", Default: "true", Opt: renderer.OptStrict},
}

// ArgoCDEnvName is the variable Argo CD passes a parameter in:
// PARAM_<NAME>, the name upper-cased and every character other than A-Z,
// 0-9 and _ made _ (ApplicationSourcePluginParameters.Environ).
func ArgoCDEnvName(name string) string {
	return "PARAM_" + notEnvChar.ReplaceAllString(strings.ToUpper(name), "_")
}

var notEnvChar = regexp.MustCompile("[^A-Z0-9_]")

const argocdLong = `The Argo CD config management plugin's commands. The plugin (examples/argocd/plugin.yaml)
runs "aws-ccm-renderer argocd generate" in the sidecar of argocd-repo-server; see
docs/argocd.md.`

var generateLong = `generate renders the upstream aws-cloud-controller-manager chart with the renderer's patches,
in-process with the Helm SDK (no helm binary), for Argo CD: it is the generate command of the
config management plugin aws-ccm-renderer-v1 (examples/argocd/plugin.yaml), run by
argocd-cmp-server in the Application's source directory. It takes no flags: it reads what the
repo server sends.

  ARGOCD_APP_NAME, ARGOCD_APP_NAMESPACE   the release's name and namespace
  ARGOCD_APP_PARAMETERS                   the Application's plugin parameters, as JSON; without
                                          it, PARAM_<NAME> and PARAM_<NAME>_<i> (array items)
  ARGOCD_ENV_<NAME>                       the plugin env of the plugin's first version: DISTRO,
                                          MODE, CHART, REPO, CHART_VERSION, STRICT, and
                                          RENDERER_ARGS (more renderer flags, split on spaces;
                                          see below)
  KUBE_VERSION, KUBE_API_VERSIONS         the destination cluster's version and API versions,
                                          shown to the chart; KUBE_VERSION also to the renderer

Parameters (a parameter wins over the plugin env of the same meaning; an empty one is not set):

  distro         ` + distros.Alternatives(distros.Values(distros.Records()), "or") + ` (default auto)
  mode           install or migrate (default install)
  chart-version  the chart's version or a constraint (default ` + upstream.LatestChartVersion + `, the one tested)
  ccm-version    the CCM's image tag (image.tag), pinned by digest: a release such as v1.34.3
                 (the promotion list's digest) or TAG@sha256:<digest>, or auto, the newest release
                 of KUBE_VERSION's minor this program knows (it says on stderr which); unset, the
                 chart's default image
  guard-image    the guard's image pinned by digest, REPO@sha256:<digest> (--guard-image): an init
                 container that holds the CCM back while it would do harm; unset, no guard
  set-arg        array: CCM flags, FLAG=VALUE each (--set-arg)
  remove-arg     array: CCM flags to remove, by name (--remove-arg)
  helm-set       array: chart values, KEY=VALUE each (helm --set)
  values-files   array: values files in the source directory (default values.yaml when it is there)
  chart          a chart name in repo, an https:// URL, an oci:// reference, or a path in the
                 source directory (anything else with a /, a .tgz, or starting with .)
  repo           the https:// URL where a chart name is looked up (default the upstream
                 chart's repository)
  strict         true (default): a renderer warning fails the generation, as Argo CD shows a
                 plugin's stderr only when it fails; false: the warning goes to stderr only

A path (chart, values-files) must stay in the source directory once resolved, symbolic links
included: an absolute path, .., or a link that leads out is refused, as are a values file that
is a URL (helm would fetch it) or -, and a chart of another URL scheme or starting with -.
Charts and repositories are fetched over https:// or oci:// only: http:// is refused, a
redirect to it too. An unknown parameter, or an array given for a string parameter or the other
way round, is refused.

RENDERER_ARGS takes only the renderer's long flags (renderer options) that nothing else sets:
--config and -c (they read a file), --help, --version, short and unknown flags are refused, and
so is a flag whose option a parameter sets, its plugin env or default included (--distro,
--mode, --strict always; --guard-image, --set-arg, --remove-arg, --ccm-version when that
parameter is set) or KUBE_VERSION (--kube-version). With guard-image set, an output without the
guard is refused.

On any failure it prints one line on stderr and nothing on stdout, and exits non-zero: 1 for a
refused parameter, plugin env or RENDERER_ARGS, and for a chart or values the renderer refuses;
2 for a value the renderer's flags do not take and for a warning (strict); 3 when the chart's
source cannot be reached or anything else fails. Argo CD then reports the error and neither applies nor
prunes anything. Notes and warnings go to stderr only when it succeeds.`

const generateExamples = `  # The plugin's generate command (examples/argocd/plugin.yaml)
  generate:
    command: [aws-ccm-renderer, argocd, generate]

  # By hand, in a source directory, as the repo server would run it
  ARGOCD_APP_NAME=aws-ccm ARGOCD_APP_NAMESPACE=kube-system KUBE_VERSION=v1.34.2 \
  ARGOCD_APP_PARAMETERS='[{"name":"distro","string":"rke2"},{"name":"helm-set","array":["image.tag=v1.34.3@sha256:ab45cec4a1ee68a556d09a362746db8fd66b258101aefcf0542f51e960248810"]}]' \
    aws-ccm-renderer argocd generate`

// NewArgoCDCommand builds argocd, with generate.
func NewArgoCDCommand(s cli.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "argocd",
		Short: "The Argo CD config management plugin's commands (generate)",
		Long:  argocdLong,
		Args:  cobra.NoArgs,
	}
	gen := &cobra.Command{
		Use:     "generate",
		Short:   "Render the chart for Argo CD's config management plugin, from the environment Argo CD sets",
		Long:    generateLong,
		Example: generateExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.Getwd()
			if err != nil {
				return err
			}
			text, err := argoGenerate(cmd, os.LookupEnv, dir, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			_, err = io.WriteString(cmd.OutOrStdout(), text)
			return cli.WriteError(err)
		},
	}
	cli.SetCommon(gen, s)
	cli.SetCommon(cmd, s)
	cmd.AddCommand(gen)
	return cmd
}

// argoRequest is what the repo server asks of generate.
type argoRequest struct {
	release, namespace string
	chart, repo        string
	version            string
	values, sets       []string
	kubeVersion        string
	apiVersions        []string
	rendererArgs       []string
	guardImage         string // the guard-image parameter's
	// picked is what ccm-version auto picked, nil otherwise.
	picked *releases.CCMMinor
	// unpromoted is the newest release auto picked when its image is not
	// in the promotion list: pinned by tag alone, with a warning.
	unpromoted *upstream.NotPromotedError
}

// argoError is a refusal of what the Application asks: exit 1, as the
// other errors of the chart and its values.
func argoError(format string, args ...any) error {
	return &renderer.InputError{Err: fmt.Errorf(format, args...)}
}

// argoParams reads the Application's parameters: ARGOCD_APP_PARAMETERS
// when the repo server sent it, else the per-parameter variables. Strings
// and arrays by name; an empty string is as unset. A value with a control
// character or a line break is refused, as on the command line: a line
// break in a chart value (helm-set) would be a line of the chart's YAML.
func argoParams(lookup func(string) (string, bool)) (map[string]string, map[string][]string, error) {
	strs, arrays, err := readArgoParams(lookup)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range ArgoCDParameters {
		if e := safetext.Check(strs[a.Name]); e != nil {
			return nil, nil, argoError("parameter %s: the value %v", a.Name, e)
		}
		for i, v := range arrays[a.Name] {
			if e := safetext.Check(v); e != nil {
				return nil, nil, argoError("parameter %s, item %d: the value %v", a.Name, i+1, e)
			}
		}
		if a.Env != "" {
			if err := envControlFree(lookup, "ARGOCD_ENV_"+a.Env); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := envControlFree(lookup, "ARGOCD_ENV_RENDERER_ARGS"); err != nil {
		return nil, nil, err
	}
	return strs, arrays, nil
}

// envControlFree refuses a plugin env variable with a control character.
func envControlFree(lookup func(string) (string, bool), name string) error {
	v, _ := lookup(name)
	if err := safetext.Check(v); err != nil {
		return argoError("%s: the value %v", name, err)
	}
	return nil
}

func readArgoParams(lookup func(string) (string, bool)) (map[string]string, map[string][]string, error) {
	strs, arrays := map[string]string{}, map[string][]string{}
	names := make([]string, len(ArgoCDParameters))
	for i, p := range ArgoCDParameters {
		names[i] = p.Name
	}
	if raw, ok := lookup("ARGOCD_APP_PARAMETERS"); ok && strings.TrimSpace(raw) != "" {
		var params []struct {
			Name   string            `json:"name"`
			String *string           `json:"string"`
			Array  []string          `json:"array"`
			Map    map[string]string `json:"map"`
		}
		if err := json.Unmarshal([]byte(raw), &params); err != nil {
			return nil, nil, argoError("ARGOCD_APP_PARAMETERS is not the JSON list of parameters Argo CD sends: %v", err)
		}
		seen := map[string]bool{}
		for _, p := range params {
			i := slices.IndexFunc(ArgoCDParameters, func(a ArgoCDParameter) bool { return a.Name == p.Name })
			if i < 0 {
				return nil, nil, argoError("parameter %q is not one of this plugin's%s; its parameters: %s",
					p.Name, renderer.DidYouMean(p.Name, names, func(s string) string { return s }), strings.Join(names, ", "))
			}
			if seen[p.Name] {
				return nil, nil, argoError("parameter %s is set twice", p.Name)
			}
			seen[p.Name] = true
			a := ArgoCDParameters[i]
			switch {
			case p.Map != nil:
				return nil, nil, argoError("parameter %s is a map; it is %s", p.Name, kindOf(a))
			case a.Array && p.String != nil:
				return nil, nil, argoError("parameter %s is a string; it is an array (array: [...])", p.Name)
			case !a.Array && p.Array != nil:
				return nil, nil, argoError("parameter %s is an array; it is a string (string: ...)", p.Name)
			case a.Array:
				arrays[p.Name] = p.Array
			case p.String != nil && *p.String != "":
				strs[p.Name] = *p.String
			}
		}
		return strs, arrays, nil
	}
	for _, a := range ArgoCDParameters {
		env := ArgoCDEnvName(a.Name)
		if !a.Array {
			if v, _ := lookup(env); v != "" {
				strs[a.Name] = v
			}
			continue
		}
		for i := 0; ; i++ {
			v, ok := lookup(fmt.Sprintf("%s_%d", env, i))
			if !ok {
				break
			}
			arrays[a.Name] = append(arrays[a.Name], v)
		}
	}
	return strs, arrays, nil
}

func kindOf(a ArgoCDParameter) string {
	if a.Array {
		return "an array (array: [...])"
	}
	return "a string (string: ...)"
}

// readArgoRequest reads the request from the environment, in the source
// directory dir (the working directory: the paths it returns are relative
// to it), with the checks of the plugin's first version (a bash
// script): the same parameters, defaults and refusals, with the same
// messages.
func readArgoRequest(lookup func(string) (string, bool), dir string) (*argoRequest, error) {
	strs, arrays, err := argoParams(lookup)
	if err != nil {
		return nil, err
	}
	// A string parameter, else the plugin env, else the default.
	param := func(name string) string {
		if v := strs[name]; v != "" {
			return v
		}
		for _, a := range ArgoCDParameters {
			if a.Name != name {
				continue
			}
			if a.Env != "" {
				if v, _ := lookup("ARGOCD_ENV_" + a.Env); v != "" {
					return v
				}
			}
			return a.Default
		}
		panic("no parameter " + name)
	}
	r := &argoRequest{}
	for _, v := range []struct {
		name string
		to   *string
	}{{"ARGOCD_APP_NAME", &r.release}, {"ARGOCD_APP_NAMESPACE", &r.namespace}} {
		val, _ := lookup(v.name)
		if val == "" {
			return nil, &renderer.UsageError{Err: fmt.Errorf("%s is not set: generate runs as the generate command of Argo CD's config management plugin, which sets it (see --help)", v.name)}
		}
		*v.to = val
	}
	r.chart = param("chart")
	switch c := r.chart; {
	case strings.HasPrefix(c, "oci://") || strings.HasPrefix(c, "https://"):
		// a chart from a registry or a URL
	case plainHTTP(c):
		return nil, argoError("chart: %s is a plain http:// URL, which anyone on the way may change; use https:// (or an oci:// reference)", c)
	case strings.Contains(c, "://") || strings.HasPrefix(c, "-") || c == "":
		return nil, argoError("chart: %s is neither a chart name, a path in the source directory, an https:// URL nor an oci:// reference", c)
	case strings.Contains(c, "/") || strings.HasSuffix(c, ".tgz") || strings.HasPrefix(c, "."):
		if err := inside(dir, "chart", c); err != nil {
			return nil, err
		}
		// A path says so to the chart loader, whatever its first part.
		r.chart = "./" + filepath.ToSlash(filepath.Clean(c))
	default:
		r.repo = param("repo")
		switch u, err := url.Parse(r.repo); {
		case plainHTTP(r.repo):
			return nil, argoError("repo: %s is a plain http:// URL, which anyone on the way may change; use https://", r.repo)
		case err != nil || u.Scheme != "https" || u.Host == "":
			return nil, argoError("repo: %s is not an https:// URL of a chart repository", r.repo)
		}
	}
	r.version = param("chart-version")
	values := arrays["values-files"]
	if len(values) == 0 {
		if st, err := os.Stat(filepath.Join(dir, "values.yaml")); err == nil && st.Mode().IsRegular() {
			values = []string{"values.yaml"}
		}
	}
	for _, f := range values {
		switch {
		case strings.Contains(f, "://"):
			return nil, argoError("values-files: %s is a URL, which helm would fetch; name a file in the Application's source directory", f)
		case f == "-" || f == "":
			return nil, argoError("values-files: %q is not a file", f)
		}
		if err := inside(dir, "values-files", f); err != nil {
			return nil, err
		}
		r.values = append(r.values, f)
	}
	r.sets = arrays["helm-set"]
	r.kubeVersion, _ = lookup("KUBE_VERSION")
	r.kubeVersion = argoKubeVersion(r.kubeVersion)
	if ccm := param("ccm-version"); ccm != "" {
		if err := r.pinCCM(ccm); err != nil {
			return nil, err
		}
	}
	if v, _ := lookup("KUBE_API_VERSIONS"); v != "" {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				r.apiVersions = append(r.apiVersions, s)
			}
		}
	}
	// The renderer's options as its flags, spelled by renderer.OptionTable
	// and parsed with RENDERER_ARGS by its Option.Set (argoGenerate).
	r.rendererArgs = []string{renderer.FlagArg(renderer.OptDistro, param("distro")), renderer.FlagArg(renderer.OptMode, param("mode"))}
	// The renderer checks the CCM against the destination cluster's
	// version: in migrate mode a CCM of another minor is refused.
	if r.kubeVersion != "" {
		r.rendererArgs = append(r.rendererArgs, renderer.FlagArg(renderer.OptKubeVersion, r.kubeVersion))
	}
	if r.guardImage = param("guard-image"); r.guardImage != "" {
		r.rendererArgs = append(r.rendererArgs, renderer.FlagArg(renderer.OptGuardImage, r.guardImage))
	}
	for _, a := range arrays["set-arg"] {
		r.rendererArgs = append(r.rendererArgs, renderer.FlagArg(renderer.OptSetArgs, a))
	}
	for _, a := range arrays["remove-arg"] {
		r.rendererArgs = append(r.rendererArgs, renderer.FlagArg(renderer.OptRemoveArgs, a))
	}
	// Argo CD keeps a plugin's stderr for when it fails: a warning nobody
	// would read fails the generation instead, unless strict is false.
	r.rendererArgs = append(r.rendererArgs, renderer.FlagArg(renderer.OptStrict, param("strict")))
	if more, _ := lookup("ARGOCD_ENV_RENDERER_ARGS"); more != "" {
		// Who sets each option already: a parameter (its plugin env or its
		// default included) or KUBE_VERSION.
		setBy := map[renderer.Opt]string{}
		for _, a := range ArgoCDParameters {
			if a.Opt != "" && (param(a.Name) != "" || len(arrays[a.Name]) > 0) {
				setBy[a.Opt] = "the parameter " + a.Name + ": set that parameter instead"
			}
		}
		if r.kubeVersion != "" {
			setBy[renderer.OptKubeVersion] = "KUBE_VERSION, the destination cluster's version that Argo CD sends"
		}
		words := strings.Fields(more)
		if err := argoRendererArgs(words, setBy); err != nil {
			return nil, err
		}
		r.rendererArgs = append(r.rendererArgs, words...)
	}
	return r, nil
}

// argoRendererArgs refuses a word of RENDERER_ARGS that is no flag of the
// renderer's option table (renderer.OptionTable): --config and -c, which
// read a file, --help, --version and any other short flag or unknown
// flag; and a flag of an option setBy says is set already (by a
// parameter, its plugin env or default, or KUBE_VERSION): an option is
// set in one place. The other words are flags' values, or arguments the
// parse refuses.
func argoRendererArgs(words []string, setBy map[renderer.Opt]string) error {
	var all, free []string
	for _, op := range renderer.OptionTable {
		all = append(all, "--"+op.Flag)
		if setBy[op.Opt] == "" {
			free = append(free, "--"+op.Flag)
		}
	}
	for _, w := range words {
		if !strings.HasPrefix(w, "-") {
			continue
		}
		flag, _, _ := strings.Cut(w, "=")
		name := strings.TrimPrefix(flag, "--")
		if !strings.HasPrefix(w, "--") && len(w) > 1 {
			// Short flags, one or several: -c FILE, -hc FILE.
			name = w[1:2]
			flag = "-" + name
		}
		switch name {
		case "config", "c":
			return argoError("RENDERER_ARGS: %s reads a file, which the plugin does not: give the renderer's options as parameters, or as its flags in RENDERER_ARGS", flag)
		case "help", "h", "version":
			return argoError("RENDERER_ARGS: %s: generate writes nothing but manifests (run aws-ccm-renderer argocd generate --help by hand)", flag)
		}
		i := slices.IndexFunc(renderer.OptionTable, func(op renderer.Option) bool { return op.Flag == name })
		switch {
		case i < 0 || !strings.HasPrefix(w, "--"):
			return argoError("RENDERER_ARGS: %s is none of the renderer's flags it takes%s: %s",
				flag, renderer.DidYouMean(flag, all, func(s string) string { return s }), strings.Join(free, ", "))
		case setBy[renderer.OptionTable[i].Opt] != "":
			return argoError("RENDERER_ARGS: %s is set by %s", flag, setBy[renderer.OptionTable[i].Opt])
		}
	}
	return nil
}

// pinCCM sets image.tag from the ccm-version parameter, by digest
// (upstream.Pinned): a release tag, with its digest or one the promotion
// list gives, or auto, the newest release of the destination's minor. A helm-set of
// image.tag beside it is refused: the tag is said once.
func (r *argoRequest) pinCCM(ccm string) error {
	for _, s := range r.sets {
		if k, _, _ := strings.Cut(s, "="); strings.TrimSpace(k) == "image.tag" {
			return argoError("ccm-version %s and helm-set %s both set the CCM's image tag: keep one", ccm, s)
		}
	}
	tag := ccm
	if ccm == "auto" {
		if r.kubeVersion == "" {
			return argoError("ccm-version auto picks the CCM of the destination cluster's minor from KUBE_VERSION, which is not set (Argo CD sets it; by hand, set it or name a release such as %s)", releases.Newest())
		}
		c, err := releases.ForCluster(r.kubeVersion)
		if err != nil {
			return argoError("ccm-version auto: KUBE_VERSION: %v", err)
		}
		r.picked, tag = &c, c.Latest
	}
	pin, err := upstream.Pinned(tag)
	var unpromoted *upstream.NotPromotedError
	if errors.As(err, &unpromoted) && ccm == "auto" {
		// The newest release of a minor whose image is not promoted yet:
		// the tag alone, said on stderr with how to pin it.
		pin, err, r.unpromoted = tag, nil, unpromoted
	}
	if err != nil {
		if ccm == "auto" {
			return argoError("ccm-version auto: KUBE_VERSION %s: %v", r.kubeVersion, err)
		}
		return argoError("ccm-version: %v; or auto", err)
	}
	r.sets = append(r.sets, "image.tag="+pin)
	return nil
}

// inside refuses a path the Application names (for what) unless it stays
// in the source directory dir once resolved, symbolic links included: the
// repo server holds other Applications' files too. Like realpath without
// -e, the last part of the path need not exist (loading it then says it
// does not).
func inside(dir, what, p string) error {
	notIn := func(more string) error {
		return argoError("%s: %s is not a path in the Application's source directory%s", what, p, more)
	}
	slashed := "/" + filepath.ToSlash(p) + "/"
	if strings.HasPrefix(slashed, "//") || strings.Contains(slashed, "/../") {
		return notIn("")
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	real, err := resolve(filepath.Join(root, p))
	if err != nil {
		return notIn("")
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return notIn(" (it leads to " + real + ")")
	}
	return nil
}

// resolve is realpath's canonical form of p: its symbolic links resolved,
// all but the last part required to exist.
func resolve(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if _, lerr := os.Lstat(p); lerr == nil {
		return "", err // a link that leads nowhere
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", err
	}
	return filepath.Join(parent, filepath.Base(p)), nil
}

// options parses the renderer's flags the request holds, the parameters'
// and RENDERER_ARGS, as the command line's (cli.OptionFlags).
func (r *argoRequest) options() (renderer.Options, error) {
	var flags cli.OptionFlags
	fs := pflag.NewFlagSet("renderer", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags.Register(fs)
	if err := fs.Parse(r.rendererArgs); err != nil {
		// %v, not %w: cobra would take pflag.ErrHelp for --help, print the
		// help on stdout and exit 0.
		return renderer.Options{}, &renderer.UsageError{Err: fmt.Errorf("the renderer's flags (parameters, RENDERER_ARGS): %v", err)}
	}
	if fs.NArg() > 0 {
		return renderer.Options{}, argoError("RENDERER_ARGS: %q is not a flag", fs.Arg(0))
	}
	return flags.Options(fs)
}

// plainHTTP tells whether a chart or repository URL is http://, in any
// case (the URL parser lower-cases the scheme).
func plainHTTP(s string) bool { return len(s) >= 7 && strings.EqualFold(s[:7], "http://") }

// argoGenerate renders the chart as the request asks: the renderer's
// options checked first, then the chart located and rendered with the
// renderer as its post-renderer. What goes to errOut (warnings and notes)
// is written there only when it succeeds: a failure is one line, its error.
func argoGenerate(cmd *cobra.Command, lookup func(string) (string, bool), dir string, errOut io.Writer) (string, error) {
	var notes bytes.Buffer
	out, err := argoRender(cmd, lookup, dir, &notes)
	if err != nil {
		return "", err
	}
	_, err = notes.WriteTo(errOut)
	return out, cli.WriteError(err)
}

func argoRender(cmd *cobra.Command, lookup func(string) (string, bool), dir string, errOut io.Writer) (string, error) {
	r, err := readArgoRequest(lookup, dir)
	if err != nil {
		return "", err
	}
	// The destination cluster's version, as Argo CD sends it, said as such
	// when it is none (the renderer would call it --kube-version).
	kv, err := chartops.KubeVersionOf(r.kubeVersion)
	if err != nil {
		return "", &renderer.UsageError{Err: fmt.Errorf("KUBE_VERSION %q, the destination cluster's version as Argo CD sends it, is not a Kubernetes version such as v1.34.2: %w",
			r.kubeVersion, err)}
	}
	opts, err := r.options()
	if err != nil {
		return "", err
	}
	pr, err := renderer.NewPostRenderer(opts)
	if err != nil {
		return "", err
	}
	pr.Warn = func(msg string) { fmt.Fprintln(errOut, "aws-ccm-renderer: warning: "+msg) }
	if c := r.picked; c != nil {
		fmt.Fprintf(errOut, "aws-ccm-renderer: ccm-version auto: KUBE_VERSION %s, so image.tag %s (%s)\n", r.kubeVersion, releases.Pin(c.Latest), releases.SourceOf(c.Minor))
	}
	if u := r.unpromoted; u != nil {
		fmt.Fprintf(errOut, "aws-ccm-renderer: warning: ccm-version auto pins %s by tag alone: %v as ccm-version\n", u.Tag, u)
	}
	src := &chartops.Source{HTTPSOnly: true}
	src.RepoURL, src.Version = r.repo, r.version
	env := chartops.NewEnv()
	env.Settings.SetNamespace(r.namespace)
	client := &chartops.Client{Env: env, Source: src, Progress: terminal.NewProgressMode(errOut, terminal.Off, 0), ErrOut: errOut,
		Verb: "argocd generate", Release: r.release}
	if err := client.Connect(false); err != nil {
		return "", err
	}
	vals, err := client.Values(chartops.NewValues(r.values, r.sets))
	if err != nil {
		return "", err
	}
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	ch, err := client.Chart(ctx, r.chart)
	if err != nil {
		return "", err
	}
	out, err := client.Template(ctx, ch, vals, pr, chartops.Template{Release: r.release, Namespace: r.namespace, KubeVersion: kv, APIVersions: r.apiVersions})
	if err == nil && r.guardImage != "" && !hasGuard(out, r.guardImage) {
		// The renderer adds the guard to the CCM's workload: none
		// (--allow-missing-workload), none guarded.
		return "", argoError("guard-image: the output has no guard, as the renderer found no CCM workload to add it to; generate does not go on without it")
	}
	return out, err
}

// hasGuard tells whether a workload of the manifests has the guard, its
// init container, of the image.
func hasGuard(manifests, image string) bool {
	for _, d := range stream.Split([][]byte{[]byte(manifests)}) {
		var obj struct {
			Spec struct {
				Template struct {
					Spec struct {
						InitContainers []struct{ Name, Image string } `yaml:"initContainers"`
					}
				}
			}
		}
		if yaml.Unmarshal(d.Raw, &obj) != nil {
			continue
		}
		for _, c := range obj.Spec.Template.Spec.InitContainers {
			if c.Name == renderer.GuardContainer && c.Image == image {
				return true
			}
		}
	}
	return false
}

// argoDroppedPlus is a version as Argo CD before 3.1 sends it: the
// cluster's, its "+" dropped (v1.26.15rke2r1 for v1.26.15+rke2r1).
var argoDroppedPlus = regexp.MustCompile(`^(v?1\.[0-9]+\.[0-9]+)([A-Za-z][0-9A-Za-z.]*)$`)

// argoKubeVersion gives back the "+" Argo CD before 3.1 drops from
// KUBE_VERSION, so that the one version parser reads it as the cluster
// gave it; any other text is left for that parser to judge.
func argoKubeVersion(v string) string {
	if m := argoDroppedPlus.FindStringSubmatch(v); m != nil {
		return m[1] + "+" + m[2]
	}
	return v
}
