package fleet

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/generated"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// runbookCommands are the commands of docs/gitops.md's sh blocks, in the
// page's order, continuation lines joined and comments left out.
func runbookCommands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testtools.Root(), "docs", "gitops.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	in, cont := false, ""
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```sh":
			in = true
		case line == "```":
			in = false
		case in && line != "" && !strings.HasPrefix(line, "#"):
			if l, ok := strings.CutSuffix(line, `\`); ok {
				cont += l
				continue
			}
			cmds = append(cmds, cont+line)
			cont = ""
		}
	}
	if len(cmds) == 0 {
		t.Fatal("docs/gitops.md has no sh blocks")
	}
	return cmds
}

// argoNamespace is the namespace of Argo CD the runbook labels Secrets in.
const argoNamespace = "argocd"

// TestGitOpsRunbook runs every command of docs/gitops.md, in the page's
// order, as an operator would: kubectl (the control plane's) and
// aws-ccm-renderer on the PATH, a kubeconfig whose current context is the
// management cluster (this package's API server, with Fleet's CRDs, the
// Fleet clusters and Argo CD's cluster Secrets) and whose contexts prod-eu
// and prod-us are a 1.37 and a 1.26 API server. Each label command is then
// where the engines read it: Argo CD's ApplicationSet generation over the
// example, and Fleet's targeting (fleet target) and deployer (fleet deploy
// --dry-run) over the example bundle; each gate reads every cluster it
// names; each plan prints the plan of the cluster's distribution.
func TestGitOpsRunbook(t *testing.T) {
	ctx := context.Background()
	cmds := runbookCommands(t)
	old := harness.StartRelease(t, testtools.Root(), harness.Kube126)
	createClusters(t)
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	fleetClusters := dyn.Resource(fleetClusterR).Namespace(fleetNamespace)

	// The management cluster: Argo CD's cluster Secrets and Fleet's
	// clusters of prod-eu (not staged yet) and prod-us (1.26, a prod
	// cluster), both RKE2 as Rancher labels them.
	// (No namespace controller runs here to delete a namespace: the test
	// removes what it made in it.)
	if _, err := cp.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	workload := map[string]*harness.ControlPlane{"prod-eu": cp, "prod-us": old}
	labels := map[string]map[string]string{
		"prod-eu": {providerLabel: "rke2"},
		"prod-us": {providerLabel: "rke2", stageLabel: "prod"},
	}
	fleetLabels := map[string]map[string]string{}
	for name, w := range workload {
		l := map[string]string{"argocd.argoproj.io/secret-type": "cluster"}
		for k, v := range labels[name] {
			l[k] = v
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: argoNamespace, Labels: l},
			StringData: map[string]string{"name": name, "server": w.Config.Host, "config": `{"tlsClientConfig":{"insecure":true}}`}}
		if _, err := cp.Client.CoreV1().Secrets(argoNamespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cp.Client.CoreV1().Secrets(argoNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
		})
		fleetLabels[name] = map[string]string{providerLabel: "rke2"}
		t.Cleanup(func() { _ = fleetClusters.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	fleetLabels["prod-us"][generated.FleetMinorLabel] = fmt.Sprintf("1.%d", releases.LastInTreeMinor)
	registerClusters(t, fleetNamespace, fleetLabels)

	// The operator's kubeconfig and PATH.
	admin, err := clientcmd.LoadFromFile(cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	oldAdmin, err := clientcmd.LoadFromFile(old.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	for name, from := range map[string]*clientcmdapi.Config{"management": admin, "prod-eu": admin, "prod-us": oldAdmin} {
		c := from.Contexts[from.CurrentContext]
		cfg.Clusters[name] = from.Clusters[c.Cluster]
		cfg.AuthInfos[name] = from.AuthInfos[c.AuthInfo]
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	cfg.CurrentContext = "management"
	home := t.TempDir()
	kubeconfig := filepath.Join(home, "config")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, "bin")
	for name, p := range map[string]string{"kubectl": testtools.Kubectl(t), "aws-ccm-renderer": testtools.Renderer(t)} {
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(path, name)); err != nil {
			t.Fatal(err)
		}
	}
	env := append(testtools.HelmEnv(t), "PATH="+path+":/usr/bin:/bin", "KUBECONFIG="+kubeconfig, "HOME="+home)

	bundle := apply(t, bundleCopy(t))
	if _, ok := target(t, bundle)["prod-us"]; ok {
		t.Fatal("fleet target: a BundleDeployment for prod-us, on 1.26, before the runbook")
	}
	// What each label command must have changed where the engines read
	// it, by a part of the command.
	after := map[string]func(t *testing.T){
		"stage=canary": func(t *testing.T) {
			if app := appFor(t, "prod-eu"); app == nil || app.Metadata.Labels["stage"] != "canary" {
				t.Errorf("the ApplicationSet's Application for prod-eu: %+v, want one of stage canary", app)
			}
		},
		// The loop that labels each Fleet cluster with the minor its API
		// server reports: prod-eu gets the CCM of its minor, prod-us, on
		// 1.26, nothing.
		`kubernetes-minor="$(`: func(t *testing.T) {
			for name, want := range map[string]string{"prod-eu": fmt.Sprintf("1.%d", harness.Current.Minor), "prod-us": fmt.Sprintf("1.%d", releases.LastInTreeMinor)} {
				c, err := fleetClusters.Get(context.Background(), name, metav1.GetOptions{})
				if err != nil || c.GetLabels()[generated.FleetMinorLabel] != want {
					t.Errorf("the Fleet cluster %s: labels %v, %v; want the minor %s", name, c.GetLabels(), err, want)
				}
				if name == "prod-eu" && c.GetLabels()[stageLabel] != "canary" {
					t.Errorf("the Fleet cluster prod-eu: labels %v; want the stage canary", c.GetLabels())
				}
			}
			fleetTag(t, bundle, "prod-eu", harness.Current.Minor)
			if _, ok := target(t, bundle)["prod-us"]; ok {
				t.Error("fleet target: a BundleDeployment for prod-us, on 1.26, after the minor labels")
			}
		},
		"mode=migrate":          func(t *testing.T) { appMode(t, "prod-us", "migrate") },
		"mode-":                 func(t *testing.T) { appMode(t, "prod-us", "install") },
		"kubernetes-minor=1.27": func(t *testing.T) { fleetTag(t, bundle, "prod-us", 27) },
	}
	contextFlag := regexp.MustCompile(`--kube-context[ =](\S+)`)
	for i, cmd := range cmds {
		c := exec.Command("sh", "-c", cmd)
		c.Dir, c.Env = home, env
		out, err := c.Output()
		code := testtools.ExitCode(err)
		var errOut string
		if ee, ok := err.(*exec.ExitError); ok {
			errOut = string(ee.Stderr)
		}
		t.Logf("step %d: %s: exit %d", i+1, cmd, code)
		switch fields := strings.Fields(cmd); {
		case fields[0] == "kubectl" || fields[0] == "for":
			if code != 0 {
				t.Fatalf("%s: exit %d\n%s", cmd, code, errOut)
			}
		case fields[0] == "aws-ccm-renderer" && fields[1] == "check":
			// A gate reads every cluster it names: exit 0 (fit) or 1
			// (problems found), never a cluster it cannot read (3).
			names := []string{}
			for _, m := range contextFlag.FindAllStringSubmatch(cmd, -1) {
				names = append(names, m[1])
			}
			if strings.Contains(cmd, "--all-contexts") {
				names = []string{"management", "prod-eu", "prod-us"}
			}
			if code != 0 && code != 1 || len(names) == 0 {
				t.Fatalf("%s: exit %d, want 0 or 1, naming clusters\n%s%s", cmd, code, out, errOut)
			}
			for _, n := range names {
				if !strings.Contains(string(out), "Cluster "+n+" (") {
					t.Errorf("%s: no report of %s:\n%s", cmd, n, out)
				}
			}
			if rows := summaryRows(string(out)); len(names) > 1 && len(rows) != len(names) {
				t.Errorf("%s: summary rows %q, want one per cluster %q", cmd, rows, names)
			}
		case fields[0] == "aws-ccm-renderer" && fields[1] == "plan":
			if first, _, _ := strings.Cut(string(out), "\n"); code != 0 || !strings.Contains(first, "RKE2") {
				t.Fatalf("%s: exit %d\n%.300s%s", cmd, code, out, errOut)
			}
		default:
			t.Fatalf("docs/gitops.md: %q is neither kubectl (or a for loop of it), aws-ccm-renderer check nor plan: add what it must do here", cmd)
		}
		for part, verify := range after {
			if strings.Contains(cmd, part) {
				t.Run(part, verify)
				delete(after, part)
			}
		}
	}
	for part := range after {
		t.Errorf("docs/gitops.md has no command with %q", part)
	}
}

// summaryRows are the contexts of check's summary table (several
// clusters), by its CONTEXT column.
func summaryRows(out string) []string {
	_, table, ok := strings.Cut(out, "CONTEXT")
	if !ok {
		return nil
	}
	var rows []string
	for _, line := range strings.Split(table, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 1 {
			rows = append(rows, f[1])
		}
	}
	return rows
}

// application is what the runbook's checks read of a generated
// Application.
type application struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Source struct {
			Plugin struct {
				Parameters []struct {
					Name   string `json:"name"`
					String string `json:"string"`
				} `json:"parameters"`
			} `json:"plugin"`
		} `json:"source"`
	} `json:"spec"`
}

// appFor is the Application the example ApplicationSet generates for a
// cluster now (Argo CD's generation over the cluster Secrets), nil when it
// generates none.
func appFor(t *testing.T, cluster string) *application {
	t.Helper()
	out, errOut, err := testtools.Run(t, nil, testtools.ArgoCDAppSet(t), "-kubeconfig", cp.Kubeconfig, "-namespace", argoNamespace,
		filepath.Join(testtools.Root(), "examples", "argocd", "applicationset.yaml"))
	if err != nil {
		t.Fatalf("argocd-appset-generate: %v\n%s\n%s", err, out, errOut)
	}
	var apps []application
	if err := json.Unmarshal(out, &apps); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, a := range apps {
		if a.Metadata.Name == "aws-ccm-"+cluster {
			return &a
		}
	}
	return nil
}

// appMode fails unless the Application of a cluster renders in mode.
func appMode(t *testing.T, cluster, mode string) {
	t.Helper()
	app := appFor(t, cluster)
	if app == nil {
		t.Fatalf("no Application for %s", cluster)
	}
	for _, p := range app.Spec.Source.Plugin.Parameters {
		if p.Name == "mode" {
			if p.String != mode {
				t.Errorf("the Application for %s: mode %q, want %s", cluster, p.String, mode)
			}
			return
		}
	}
	t.Errorf("the Application for %s has no mode parameter", cluster)
}

// fleetTag fails unless Fleet's targeting gives the cluster a
// BundleDeployment whose CCM, as Fleet's deployer renders it, is the
// newest release of the minor.
func fleetTag(t *testing.T, bundle []byte, cluster string, minor int) {
	t.Helper()
	d, ok := target(t, bundle)[cluster]
	if !ok {
		t.Fatalf("fleet target: no BundleDeployment for %s", cluster)
	}
	out, errOut, err := deploy(t, d, true)
	if err != nil {
		t.Fatalf("fleet deploy --dry-run for %s: %v\n%s", cluster, err, errOut)
	}
	ccm, err := manifest.CCM(deployedObjects(t, out))
	if err != nil {
		t.Fatal(err)
	}
	if image := fmt.Sprint(manifest.Containers(ccm)[0]["image"]); !strings.HasSuffix(image, ":"+releases.Pin(releases.Tag(minor))) {
		t.Errorf("%s: the CCM %s, want the release of 1.%d, %s", cluster, image, minor, releases.Tag(minor))
	}
}
