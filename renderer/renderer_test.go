package renderer

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/benchdata"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools/ccmtest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/stream"
)

var update = flag.Bool("update", false, "rewrite the expected.yaml golden files")

// TestRenderCases runs the directory cases in testdata/render: each holds an
// input.yaml, an optional config.yaml (a RendererConfig), and either the
// expected.yaml output or an errors.txt whose lines the error must contain.
func TestRenderCases(t *testing.T) {
	dirs, err := filepath.Glob("testdata/render/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			opts := DefaultOptions()
			if data, err := os.ReadFile(filepath.Join(dir, "config.yaml")); err == nil {
				if opts, err = ParseConfig(data); err != nil {
					t.Fatalf("config.yaml: %v", err)
				}
			}
			in := readFile(t, filepath.Join(dir, "input.yaml"))
			wantErrs, _ := os.ReadFile(filepath.Join(dir, "errors.txt"))
			out, err := render(opts, in)
			if len(wantErrs) > 0 {
				if err == nil {
					t.Fatalf("no error, want %q", wantErrs)
				}
				if out != nil {
					t.Fatal("an error came with output")
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error spans lines: %q", err)
				}
				for _, want := range strings.Split(strings.TrimSpace(string(wantErrs)), "\n") {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join(dir, "expected.yaml")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want := readFile(t, golden); !bytes.Equal(out, want) {
				t.Errorf("output differs from %s (go test ./renderer -update rewrites it):\n%s", golden, out)
			}
			again, err := render(opts, out)
			if err != nil {
				t.Fatalf("rendering the output again: %v", err)
			}
			if !bytes.Equal(again, out) {
				t.Errorf("rendering the output again changed it:\n%s", again)
			}
		})
	}
}

func render(o Options, in []byte) ([]byte, error) {
	r, err := New(o)
	if err != nil {
		return nil, err
	}
	out, err := r.Render(in)
	if err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// scanned splits and scans a stream.
func scanned(t *testing.T, b []byte) []*stream.Doc {
	t.Helper()
	docs := stream.Split([][]byte{b})
	if err := stream.Scan(docs); err != nil {
		t.Fatal(err)
	}
	return docs
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pinnedSample is the sample chart's output with its CCM pinned to the
// release of the last minor that can migrate, as a migration pins it, so
// that every mode renders it.
func pinnedSample(t *testing.T) []byte {
	t.Helper()
	in := readFile(t, "testdata/render/rke2-install/input.yaml")
	pinned := bytes.ReplaceAll(in, []byte("cloud-controller-manager:v1.35.0"), []byte("cloud-controller-manager:"+releases.Tag(releases.LastInTreeMinor)))
	if bytes.Equal(pinned, in) {
		t.Fatal("the sample's CCM image is not v1.35.0 any more")
	}
	return pinned
}

// allOptions is every distro in every mode it has.
func allOptions() map[string]Options {
	m := map[string]Options{}
	for _, d := range distros.All {
		for _, mode := range ModesOf(mustProfile(d)) {
			o := DefaultOptions()
			o.Distro, o.Mode = d, mode
			m[string(d)+"/"+string(mode)] = o
		}
	}
	return m
}

// TestUntouchedDocuments: documents that are not targets come out byte for
// byte and in order, for every distro and mode, and a second render is a
// no-op.
func TestUntouchedDocuments(t *testing.T) {
	in := pinnedSample(t)
	extra := []byte("---\n# Source: other/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: web # a comment\nspec:\n  ports:\n  - {port: 80}\n---\n---\n# a document of only comments\n")
	in = append(append([]byte{}, extra...), in...)
	for name, o := range allOptions() {
		t.Run(name, func(t *testing.T) {
			out, err := render(o, in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(out, extra) {
				t.Fatalf("the first documents changed:\n%s", out)
			}
			inDocs, outDocs := scanned(t, in), scanned(t, out)
			for _, d := range inDocs {
				if d.Kind != "ConfigMap" && d.Kind != "ServiceAccount" && d.Kind != "ClusterRoleBinding" {
					continue
				}
				found := false
				for _, od := range outDocs {
					found = found || bytes.Equal(od.Raw, d.Raw)
				}
				if !found {
					t.Errorf("%s changed", d)
				}
			}
			again, err := render(o, out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, out) {
				t.Errorf("not idempotent")
			}
		})
	}
}

// TestModeRoundTrip: migrate then install gives what install alone gives,
// so the leader migration ConfigMap, volume, mount and flags all go.
func TestModeRoundTrip(t *testing.T) {
	in := pinnedSample(t)
	for _, d := range distros.All {
		if !slices.Contains(ModesOf(mustProfile(d)), ModeMigrate) {
			continue
		}
		t.Run(string(d), func(t *testing.T) {
			install, migrate := DefaultOptions(), DefaultOptions()
			install.Distro, migrate.Distro, migrate.Mode = d, d, ModeMigrate
			direct, err := render(install, in)
			if err != nil {
				t.Fatal(err)
			}
			mid, err := render(migrate, in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(mid, []byte("kind: LeaderMigrationConfiguration")) || !bytes.Contains(mid, []byte("--leader-migration-config="+LeaderMigrationConfigPath)) {
				t.Fatalf("migrate output lacks the leader migration config:\n%s", mid)
			}
			back, err := render(install, mid)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(direct, back) {
				t.Errorf("migrate then install:\n%s\ninstall alone:\n%s", back, direct)
			}
		})
	}
}

// TestNothingOnError: every error path returns no output at all.
func TestOptionsErrors(t *testing.T) {
	f := false
	cases := map[string]func(*Options){
		"unknown mode":             func(o *Options) { o.Mode = "upgrade" },
		"no host network value":    func(o *Options) { o.HostNetwork = nil },
		"bad set-arg":              func(o *Options) { o.SetArgs = []string{"v"} },
		"set-arg twice":            func(o *Options) { o.SetArgs = []string{"v=1", "--v=2"} },
		"remove forced":            func(o *Options) { o.RemoveArgs = []string{"cloud-provider"} },
		"remove a risky one":       func(o *Options) { o.RemoveArgs = []string{"configure-cloud-routes"} },
		"another cloud provider":   func(o *Options) { o.SetArgs = []string{"cloud-provider=gce"} },
		"leader migration by hand": func(o *Options) { o.SetArgs = []string{"enable-leader-migration=true"} },
		"lease name not DNS-1123":  func(o *Options) { o.Mode = ModeMigrate; o.LeaderName = "Cloud_Lock" },
		"target without a name":    func(o *Options) { o.Target = "DaemonSet/kube-system/" },
		"target of another kind":   func(o *Options) { o.Target = "ConfigMap/kube-system/x" },
		"bad kube version":         func(o *Options) { o.KubeVersion = "one.twenty-six" },
		"empty kcm user":           func(o *Options) { o.KCMUser = "" },
		"remove-arg with value":    func(o *Options) { o.RemoveArgs = []string{"v=2"} },
		"leader name in install":   func(o *Options) { o.LeaderName = "x" },
		"unknown migration config": func(o *Options) { o.LeaderMigrationConfig = "maybe" },
		"empty leader name":        func(o *Options) { o.HostNetwork = &f; o.LeaderName = "" },
		"k3s in migrate mode":      func(o *Options) { o.Distro, o.Mode = distros.K3s, ModeMigrate },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			mutate(&o)
			if _, err := New(o); !IsUsageError(err) {
				t.Fatalf("New = %v, want a usage error", err)
			}
		})
	}
}

// TestRiskyArgs: unusual but legitimate values are rendered, with a
// warning that says what they risk.
func TestRiskyArgs(t *testing.T) {
	in := readFile(t, "testdata/render/rke2-install/input.yaml")
	for arg, risk := range map[string]string{
		"configure-cloud-routes=true":           "route tables",
		"use-service-account-credentials=false": "the CCM's own service account",
	} {
		t.Run(arg, func(t *testing.T) {
			o := DefaultOptions()
			o.SetArgs = []string{arg}
			r, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			out, err := r.Render(in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(out.Bytes(), []byte("--"+arg)) {
				t.Errorf("--%s is not in the output", arg)
			}
			if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], risk) || !strings.Contains(out.Warnings[0], arg) {
				t.Errorf("warnings %q, want one naming %s and %q", out.Warnings, arg, risk)
			}
		})
	}
}

// TestOverriddenArgs: a risky value the chart's values give the CCM (its
// args) is replaced by the renderer's with a warning that says what it
// had, and how to keep it with what risk, as --set-arg's warning does; a
// --set-arg of the flag keeps it with its own warning only, and --strict
// makes the warning an error.
func TestOverriddenArgs(t *testing.T) {
	in := string(readFile(t, "testdata/render/rke2-install/input.yaml"))
	with := func(args ...string) string {
		return strings.Replace(in, "            - --cloud-provider=aws\n", "            - --cloud-provider=aws\n            - "+strings.Join(args, "\n            - ")+"\n", 1)
	}
	for _, c := range []struct {
		name, in string
		opts     func(*Options)
		want     []string // one warning each, containing these
		flag     string   // in the output
		err      string
	}{
		{name: "cloud routes from the values", in: with("--configure-cloud-routes=true"), flag: "--configure-cloud-routes=false",
			want: []string{`container "cloud-controller-manager" comes with --configure-cloud-routes=true (the chart's values), which the renderer replaces with --configure-cloud-routes=false; to keep true, pass --set-arg=configure-cloud-routes=true: the CCM's route controller`}},
		{name: "a bare boolean flag is true", in: with("--configure-cloud-routes"), flag: "--configure-cloud-routes=false",
			want: []string{"comes with --configure-cloud-routes=true (the chart's values)"}},
		{name: "own credentials from the values", in: with("--use-service-account-credentials=false"), flag: "--use-service-account-credentials=true",
			want: []string{"comes with --use-service-account-credentials=false (the chart's values), which the renderer replaces with --use-service-account-credentials=true; to keep false, pass --set-arg=use-service-account-credentials=false: every CCM controller"}},
		{name: "both, split words", in: with("--use-service-account-credentials", "f", "--configure-cloud-routes", "1"), flag: "--configure-cloud-routes=false",
			want: []string{"--use-service-account-credentials=f (the chart's values)", "--configure-cloud-routes=1 (the chart's values)"}},
		{name: "the renderer's own values", in: with("--configure-cloud-routes=False", "--use-service-account-credentials=1"), flag: "--configure-cloud-routes=false"},
		{name: "kept with --set-arg", in: with("--configure-cloud-routes=true"), opts: func(o *Options) { o.SetArgs = []string{"configure-cloud-routes=true"} },
			flag: "--configure-cloud-routes=true", want: []string{"--configure-cloud-routes=true: the CCM's route controller"}},
		{name: "strict", in: with("--configure-cloud-routes=true"), opts: func(o *Options) { o.Strict = true },
			err: "which the renderer replaces with --configure-cloud-routes=false; to keep true, pass --set-arg=configure-cloud-routes=true: the CCM's route controller then writes pod CIDR routes into the VPC's route tables; only clusters whose pod network relies on cloud routes want that (--strict: warnings are errors)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, warnings, err := renderCase(t, c.in, c.opts)
			if c.err != "" {
				if !IsInputError(err) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want an input error containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != len(c.want) {
				t.Fatalf("warnings %q, want %d", warnings, len(c.want))
			}
			for i, w := range c.want {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %q, want it to contain %q", warnings[i], w)
				}
			}
			if !bytes.Contains(out, []byte("- "+c.flag+"\n")) {
				t.Errorf("%s is not in the output", c.flag)
			}
			// A render of the output has nothing to override.
			if _, again, err := renderCase(t, string(out), c.opts); err != nil || len(again) > len(c.want) {
				t.Errorf("rendering the output again: %v, warnings %q", err, again)
			}
		})
	}
}

// TestStrict: --strict makes a warning about the options a usage error
// before anything is read, a warning about the input an input error, and
// changes nothing when there is no warning.
func TestStrict(t *testing.T) {
	in := readFile(t, "testdata/render/rke2-install/input.yaml")
	o := DefaultOptions()
	o.Strict, o.SetArgs = true, []string{"configure-cloud-routes=true"}
	_, err := New(o)
	if !IsUsageError(err) || err.Error() != "--configure-cloud-routes=true: the CCM's route controller then writes pod CIDR routes into the VPC's route tables; "+
		"only clusters whose pod network relies on cloud routes want that (--strict: warnings are errors)" {
		t.Errorf("a risky --set-arg with --strict: %v", err)
	}
	if msg := Message(err, KeySpelling); !strings.HasSuffix(msg, "(strict: warnings are errors)") {
		t.Errorf("spelled as keys: %s", msg)
	}
	o.SetArgs, o.AllowMissingWorkload = nil, true
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Render([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")); !IsInputError(err) || !strings.Contains(err.Error(), noWorkloadWarning) {
		t.Errorf("no workload, allowed, with --strict: %v", err)
	}
	out, err := r.Render(in)
	if err != nil || len(out.Warnings) != 0 {
		t.Fatalf("no warning with --strict: %v", err)
	}
	o.Strict = false
	plain, _ := New(o)
	want, err := plain.Render(in)
	if err != nil || !bytes.Equal(out.Bytes(), want.Bytes()) {
		t.Errorf("--strict changed the output without a warning: %v", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	const head = "apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\n"
	for name, c := range map[string]struct{ text, want string }{
		"unknown field": {head + "distor: rke\n", `line 3: unknown key "distor" (did you mean distro?); the keys: apiVersion, kind, metadata, distro, mode, hostNetwork,`},
		"far from any":  {head + "color: red\n", `line 3: unknown key "color"; the keys: apiVersion, kind, metadata, distro,`},
		"metadata key":  {head + "metadata:\n  nmae: x\n", `line 4: unknown key metadata.nmae (did you mean metadata.name?); metadata's keys: name, annotations, labels`},
		"twice":         {head + "distro: rke\ndistro: rke2\n", "line 4: distro is given twice"},
		"list as text":  {head + "setArgs: v=4\n", "line 3: setArgs: want a list, e.g. setArgs: [v=4]"},
		"list of lists": {head + "removeArgs: [[v]]\n", "line 3: removeArgs: want a list of strings, e.g. removeArgs: [v]"},
		"bad boolean":   {head + "strict: maybe\n", `line 3: strict: want true or false, got "maybe"`},
		"list for text": {head + "distro: [rke]\n", "line 3: distro: want a single value, not a list or mapping"},
		"not a mapping": {"- a\n", "line 1: want a mapping of keys"},
		"wrong kind":    {"apiVersion: v1\nkind: ConfigMap\n", "want apiVersion aws-ccm-renderer.io/v1alpha1 and kind RendererConfig"},
		"two documents": {head + "---\na: 1\n", "a config file holds one document"},
		"empty":         {"", "empty config"},
		"not yaml":      {"{", "yaml:"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseConfig([]byte(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "renderer.Config") {
				t.Fatalf("err = %v, want it to say %q", err, c.want)
			}
		})
	}
	// What the file does not set keeps its default; labels are allowed.
	o, err := ParseConfig([]byte(head + "metadata:\n  labels: {a: b}\ndistro: rke\nhostNetwork: false\nsetArgs: [v=4]\nkubeVersion: null\n"))
	want := DefaultOptions()
	f := false
	want.Distro, want.HostNetwork, want.SetArgs = distros.RKE, &f, []string{"v=4"}
	if err != nil || !reflect.DeepEqual(o, want) {
		t.Errorf("ParseConfig = %+v, %v; want %+v", o, err, want)
	}
}

// TestPatchedDocumentsKeepTheirStyle: a patched document keeps the layout
// its template gave it where the encoder allows, so a review of the change
// sees the patch: here toYaml | nindent's mixed list indentation, where
// adding a verb adds one line.
func TestPatchedDocumentsKeepTheirStyle(t *testing.T) {
	role := "---\n# Source: chart/templates/clusterrole.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: ccm\nrules:\n" +
		"  - apiGroups:\n    - \"\"\n    resources:\n    - nodes\n    verbs:\n    - '*'\n" +
		"  - apiGroups:\n    - \"\"\n    resources:\n    - serviceaccounts\n    verbs:\n    - create\n" +
		"  - apiGroups:\n    - \"\"\n    resources:\n    - serviceaccounts/token\n    verbs:\n    - create\n"
	// The fixture's binding and workload, with this role in place of its.
	rest := docs(ccmtest.Docs(ccmtest.Options{Account: true})[2:]...)
	out, err := render(DefaultOptions(), []byte(role+rest))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(role, "    - serviceaccounts\n    verbs:\n    - create\n", "    - serviceaccounts\n    verbs:\n    - create\n    - get\n", 1)
	if !bytes.HasPrefix(out, []byte(want)) {
		t.Errorf("the ClusterRole changed beyond the added verb:\n%s", out)
	}
}

func TestIndentTopLevelLists(t *testing.T) {
	in := "a: 1\nrules:\n- x: |\n    text\n  y:\n  - z\n\nb:\n  c: 2\nlist:\n- 1\n"
	want := "a: 1\nrules:\n  - x: |\n      text\n    y:\n    - z\n\nb:\n  c: 2\nlist:\n  - 1\n"
	if got := string(indentTopLevelLists([]byte(in))); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestRenderChunks: rendering chunks gives the bytes rendering the whole
// stream gives, and document numbers and lines run on across chunks.
func TestRenderChunks(t *testing.T) {
	in := benchdata.Umbrella(500)
	r, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	whole, err := r.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := stream.Read(bytes.NewReader(in), 0)
	if err != nil || len(chunks) < 3 {
		t.Fatalf("%d chunks, %v: the test does not exercise chunks", len(chunks), err)
	}
	parts, err := r.RenderChunks(chunks)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(whole.Bytes(), parts.Bytes()) {
		t.Fatal("chunked rendering differs")
	}
	bad := append(append([]byte{}, in...), "---\nkind: [\n"...)
	chunks, _ = stream.Read(bytes.NewReader(bad), 0)
	_, err = r.RenderChunks(chunks)
	lines := bytes.Count(in, []byte("\n")) + 1
	if err == nil || !strings.Contains(err.Error(), "document 501 (line "+strconv.Itoa(lines)+")") {
		t.Fatalf("error %v does not name document 501 at line %d", err, lines)
	}
}
