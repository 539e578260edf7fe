package chartops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// nop is a progress display that shows nothing.
type nop struct{ io.Writer }

func (nop) Begin(string) {}
func (nop) End(error)    {}

// memoryClient is a Client over Helm's memory storage and its fake kube
// client, as Helm's own action tests make one (pkg/action/action_test.go).
func memoryClient(t *testing.T, kube *kubefake.FailingKubeClient) *Client {
	t.Helper()
	if kube == nil {
		kube = &kubefake.FailingKubeClient{}
	}
	kube.PrintingKubeClient.Out = io.Discard
	return &Client{
		Env:      NewEnv(),
		Source:   &Source{},
		Progress: nop{io.Discard},
		ErrOut:   io.Discard,
		Config: &action.Configuration{
			Releases:     storage.Init(driver.NewMemory()),
			KubeClient:   kube,
			Capabilities: chartutil.DefaultCapabilities,
			Log:          func(string, ...any) {},
		},
	}
}

// sampleChart is the project's own sample chart, loaded.
func sampleChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(testtools.SampleChart())
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func postRenderer(t *testing.T, distro distros.Distro, mode renderer.Mode) *renderer.PostRenderer {
	t.Helper()
	o := renderer.DefaultOptions()
	o.Distro, o.Mode = distro, mode
	o.AllowVersionSkew = mode == renderer.ModeMigrate // the sample's CCM (1.35) is newer than any cluster that migrates
	pr, err := renderer.NewPostRenderer(o)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func TestTemplate(t *testing.T) {
	c := memoryClient(t, nil)
	ch := sampleChart(t)
	kv, err := ParseKubeVersion("v1.30.2")
	if err != nil {
		t.Fatal(err)
	}
	tm := Template{Release: "ccm", Namespace: "kube-system", KubeVersion: kv}
	plain, err := c.Template(context.Background(), ch, map[string]any{}, nil, tm)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := c.Template(context.Background(), ch, map[string]any{}, postRenderer(t, distros.RKE2, renderer.ModeInstall), tm)
	if err != nil {
		t.Fatal(err)
	}
	want := `node-role.kubernetes.io/control-plane: "true"`
	if strings.Contains(plain, want) || !strings.Contains(patched, want) || !strings.Contains(patched, "# Source: aws-ccm-sample/templates/workload.yaml") {
		t.Errorf("the post-renderer did not patch, or patched the plain render:\n%s", patched)
	}
	tm.ShowOnly = []string{"templates/workload.yaml"}
	only, err := c.Template(context.Background(), ch, map[string]any{}, nil, tm)
	if err != nil || strings.Contains(only, "kind: ClusterRole\n") || !strings.Contains(only, "kind: DaemonSet") {
		t.Errorf("--show-only: %v\n%s", err, only)
	}
	tm.ShowOnly = []string{"templates/none.yaml"}
	if _, err := c.Template(context.Background(), ch, map[string]any{}, nil, tm); !renderer.IsInputError(err) ||
		!strings.Contains(err.Error(), "templates/config.yaml") {
		t.Errorf("--show-only of no template: %v", err)
	}
	tm.ShowOnly = []string{"["}
	if _, err := c.Template(context.Background(), ch, map[string]any{}, nil, tm); !renderer.IsUsageError(err) {
		t.Errorf("--show-only of a bad pattern: %v", err)
	}
	// A renderer error comes through Helm's wrapping typed.
	broken := sampleChart(t)
	for i, f := range broken.Templates {
		if f.Name == "templates/workload.yaml" {
			broken.Templates = append(broken.Templates[:i], broken.Templates[i+1:]...)
			break
		}
	}
	if _, err := c.Template(context.Background(), broken, map[string]any{}, postRenderer(t, distros.RKE2, renderer.ModeInstall), Template{Release: "ccm"}); !renderer.IsInputError(err) ||
		!strings.Contains(err.Error(), "no AWS cloud-controller-manager") {
		t.Errorf("a chart without the CCM: %v", err)
	}
}

// TestInstallUpgrade: install, the options the release records, upgrade,
// upgrade of a release that is not there, and upgrade --install of one
// never installed and of one uninstalled with its history kept.
func TestInstallUpgrade(t *testing.T) {
	c := memoryClient(t, nil)
	ch, ctx, vals := sampleChart(t), context.Background(), map[string]any{}
	in := Install{Release: "ccm", Namespace: "kube-system"}
	out, err := c.Install(ctx, ch, vals, postRenderer(t, distros.RKE, renderer.ModeMigrate), in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Name != "ccm" || out.Revision != 1 || out.Status != "deployed" || out.Chart != "aws-ccm-sample-0.1.0" || out.Manifest != "" {
		t.Errorf("install: %+v", out)
	}
	rec, err := c.RecordedOptions("ccm", "kube-system")
	if err != nil || rec == nil || !rec.Recorded || rec.Options.Distro != distros.RKE || rec.Options.Mode != renderer.ModeMigrate || rec.Release != "ccm revision 1" {
		t.Fatalf("recorded options: %+v %v", rec, err)
	}
	if rec, err := c.RecordedOptions("other", "kube-system"); rec != nil || err != nil {
		t.Errorf("a release not there records %+v %v", rec, err)
	}
	up := Upgrade{Install: in, MaxHistory: 10}
	if out, err = c.Upgrade(ctx, ch, vals, postRenderer(t, distros.RKE, renderer.ModeInstall), up); err != nil || out.Revision != 2 {
		t.Fatalf("upgrade: %+v %v", out, err)
	}
	if rec, _ := c.RecordedOptions("ccm", "kube-system"); rec.Options.Mode != renderer.ModeInstall {
		t.Errorf("after the upgrade: %+v", rec)
	}
	// Another name, while release ccm runs the CCM: most likely the
	// wrong RELEASE, named with the one that owns the CCM.
	up.Release, c.Verb = "new", "upgrade"
	const owned = "no release new in namespace kube-system, and the CCM (DaemonSet kube-system/aws-cloud-controller-manager) is owned by release ccm: " +
		"use ccm as RELEASE (aws-ccm-renderer upgrade ccm ...)"
	for _, install := range []bool{false, true} {
		up.InstallMissing = install
		if _, err := c.Upgrade(ctx, ch, vals, postRenderer(t, distros.RKE, renderer.ModeInstall), up); !renderer.IsInputError(err) || err.Error() != owned {
			t.Errorf("upgrade (--install %v) of another release than the CCM's: %v", install, err)
		}
	}
	if _, err := c.Install(ctx, ch, vals, postRenderer(t, distros.RKE, renderer.ModeInstall), Install{Release: "new", Namespace: "kube-system"}); !renderer.IsInputError(err) ||
		!strings.Contains(err.Error(), "is owned by release ccm: use ccm as RELEASE") {
		t.Errorf("install of another release than the CCM's: %v", err)
	}
	if _, err := action.NewUninstall(c.Config).Run("ccm"); err != nil {
		t.Fatal(err)
	}
	up.InstallMissing = false
	if _, err := c.Upgrade(ctx, ch, vals, postRenderer(t, distros.RKE, renderer.ModeInstall), up); !renderer.IsInputError(err) ||
		!strings.Contains(err.Error(), "upgrade --install installs it") {
		t.Errorf("upgrade of a release not there: %v", err)
	}
	up.InstallMissing = true
	if out, err := c.Upgrade(ctx, ch, vals, postRenderer(t, distros.RKE, renderer.ModeInstall), up); err != nil || out.Revision != 1 {
		t.Errorf("upgrade --install of a release not there: %+v %v", out, err)
	}
	// Uninstalled with its history kept: gone, and installed again as
	// revision 2, replacing the name.
	un := action.NewUninstall(c.Config)
	un.KeepHistory = true
	if _, err := un.Run("new"); err != nil {
		t.Fatal(err)
	}
	if gone, uninstalled, err := c.releaseGone("new"); !gone || !uninstalled || err != nil {
		t.Errorf("an uninstalled release: gone %v, uninstalled %v, %v", gone, uninstalled, err)
	}
	if out, err := c.Upgrade(ctx, ch, vals, postRenderer(t, distros.RKE, renderer.ModeInstall), up); err != nil || out.Revision != 2 {
		t.Errorf("upgrade --install of an uninstalled release: %+v %v", out, err)
	}
	// A dry run prints the manifests and stores nothing new (in a
	// namespace where no release runs the CCM yet).
	c = memoryClient(t, nil)
	in.Release, in.DryRun = "dry", DryRunServer
	if out, err := c.Install(ctx, ch, vals, postRenderer(t, distros.RKE, renderer.ModeInstall), in); err != nil || !strings.Contains(out.Manifest, "kind: DaemonSet") {
		t.Errorf("dry run: %+v %v", out, err)
	}
	if _, err := c.Config.Releases.Deployed("dry"); err == nil {
		t.Error("a dry run deployed a release")
	}
}

// TestInstallInterrupted: an install waiting for its objects, interrupted
// (Ctrl-C cancels the command's context), ends at once as Helm ends it: the
// release failed, not left pending, and the error is no input error.
func TestInstallInterrupted(t *testing.T) {
	c := memoryClient(t, &kubefake.FailingKubeClient{WaitDuration: 20 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Install(ctx, sampleChart(t), map[string]any{}, postRenderer(t, distros.RKE2, renderer.ModeInstall),
		Install{Release: "ccm", Namespace: "kube-system", Wait: true, Timeout: time.Minute})
	if err == nil || renderer.IsInputError(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted install: %v", err)
	}
	if el := time.Since(start); el > 15*time.Second {
		t.Errorf("the install went on for %s after the interruption", el)
	}
	rels, err := c.Config.Releases.History("ccm")
	if err != nil || len(rels) != 1 || rels[0].Info.Status != release.StatusFailed {
		t.Errorf("the release after the interruption: %v %v", rels, err)
	}
}

// TestInstallFails: what the cluster refuses while Helm waits for the
// objects is an input error; what cannot reach it, or may not, is not.
func TestInstallFails(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   error
		input bool
	}{
		{"refused", errors.New("admission webhook denied the request"), true},
		{"unreachable", &url.Error{Op: "Post", URL: "https://127.0.0.1:1", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, false},
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Resource: "daemonsets"}, "ccm", errors.New("no")), false},
	} {
		cl := memoryClient(t, &kubefake.FailingKubeClient{WaitError: c.err})
		_, err := cl.Install(context.Background(), sampleChart(t), map[string]any{}, postRenderer(t, distros.RKE2, renderer.ModeInstall),
			Install{Release: "ccm", Namespace: "kube-system", Wait: true})
		if err == nil || renderer.IsInputError(err) != c.input {
			t.Errorf("%s: %v (an input error: %v)", c.name, err, renderer.IsInputError(err))
		}
	}
}

func TestClassify(t *testing.T) {
	usage := &renderer.UsageError{Err: errors.New("u")}
	timeout := fmt.Errorf("release ccm failed: %w", wait.ErrorInterrupted(context.DeadlineExceeded))
	for _, c := range []struct {
		name        string
		err         error
		input, same bool
	}{
		{"nil", nil, false, true},
		{"usage", usage, false, true},
		{"the renderer's input error", &renderer.InputError{Err: errors.New("i")}, true, true},
		{"a rollout that timed out", timeout, false, true},
		{"interrupted", fmt.Errorf("x: %w", context.Canceled), false, true},
		{"unreachable", fmt.Errorf("Kubernetes cluster unreachable: %w", &url.Error{Op: "Get", URL: "u", Err: errors.New("x")}), false, true},
		{"unauthorized", apierrors.NewUnauthorized("no"), false, true},
		{"refused", errors.New("the chart is broken"), true, false},
	} {
		got := Classify(c.err)
		if renderer.IsInputError(got) != c.input || (c.same && got != c.err) {
			t.Errorf("%s: %v (input %v)", c.name, got, renderer.IsInputError(got))
		}
	}
}

func TestNamespace(t *testing.T) {
	t.Setenv("HELM_NAMESPACE", "")
	env := NewEnv()
	if ns := env.Namespace(); ns != "kube-system" {
		t.Errorf("default: %s", ns)
	}
	t.Setenv("HELM_NAMESPACE", "from-env")
	if ns := NewEnv().Namespace(); ns != "from-env" {
		t.Errorf("$HELM_NAMESPACE: %s", ns)
	}
}

// TestLastRevision: check reads a release's last revision whatever its
// status: a failed upgrade is the failed revision, with Helm's
// description, not the deployed one before it.
func TestLastRevision(t *testing.T) {
	ctx := context.Background()
	c := memoryClient(t, nil)
	if _, err := lastRevision(c.Config, "kube-system", "ccm"); !renderer.IsInputError(err) || !strings.Contains(err.Error(), "no release ccm in namespace kube-system") {
		t.Errorf("no release: %v", err)
	}
	if _, err := c.Install(ctx, sampleChart(t), map[string]any{}, postRenderer(t, distros.RKE2, renderer.ModeInstall), Install{Release: "ccm", Namespace: "kube-system"}); err != nil {
		t.Fatal(err)
	}
	if r, err := lastRevision(c.Config, "kube-system", "ccm"); err != nil || r.ID != "ccm revision 1" || r.Status != "deployed" || !strings.Contains(r.Manifest, "kind: DaemonSet") {
		t.Errorf("deployed: %+v %v", r, err)
	}
	c.Config.KubeClient = &kubefake.FailingKubeClient{PrintingKubeClient: kubefake.PrintingKubeClient{Out: io.Discard}, WaitError: errors.New("DaemonSet kube-system/aws-cloud-controller-manager: not ready")}
	if _, err := c.Upgrade(ctx, sampleChart(t), map[string]any{}, postRenderer(t, distros.RKE2, renderer.ModeInstall), Upgrade{Install: Install{Release: "ccm", Namespace: "kube-system", Wait: true, Timeout: time.Second}}); err == nil {
		t.Fatal("the upgrade did not fail")
	}
	r, err := lastRevision(c.Config, "kube-system", "ccm")
	if err != nil || r.ID != "ccm revision 2" || r.Status != "failed" || !strings.Contains(r.Description, "not ready") {
		t.Errorf("failed: %+v %v", r, err)
	}
}
