package scale

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// defaultFleetSizes are the fleets measured unless $E2E_FLEET_SIZES names
// others, as N[,N...]: 50 API servers fit on the 2-core, 24 GiB
// development machine (about 300 MiB of resident memory each).
var defaultFleetSizes = []int{1, 10, 50}

// fleetCluster is each cluster of a fleet, small: three control-plane
// nodes and seven workers, 300 pods. The fleet's clusters take turns at
// the distributions.
var (
	fleetCluster  = cluster{nodes: 10, pods: 300}
	fleetDistros  = []string{"kubeadm", "rke2", "k3s"}
	fleetStarters = 4 // how many API servers start at once
)

func fleetSizes(b *testing.B) []int {
	b.Helper()
	return fromEnv(b, "E2E_FLEET_SIZES", defaultFleetSizes, "a number of clusters", func(f string) (int, bool) {
		n, err := strconv.Atoi(f)
		return n, err == nil && n > 0
	})
}

// BenchmarkFleetScale measures aws-ccm-renderer over a fleet of N clusters
// (defaultFleetSizes, or $E2E_FLEET_SIZES), each a real API server
// (e2e/harness, kube-apiserver 1.37) seeded as seed does with fleetCluster
// of its distribution (kubeadm, RKE2, K3s in turn) and the CCM rendered
// for it. The API servers share one etcd, each under a prefix of its own
// (harness.SharedEtcd): an etcd each would cost its memory N times. The
// largest fleet is started once and the smaller ones are its first
// clusters, so that every N is measured beside the same idle API servers.
//
// One kubeconfig has a context a cluster. Each iteration runs, as whole
// processes measured as BenchmarkCheckScale's (wall time, CPU time, peak
// RSS by GNU time): `check --all-contexts -o json`, one process that
// checks the clusters concurrently; then `check --kube-context X -o json`
// for each cluster one after the other, summed (its peak the highest); then
// the render each cluster needs (renderArgs: aws-ccm-renderer template of
// the upstream chart for the cluster's distribution and --kube-version)
// one after the other, summed. The report has the ratios
// all-contexts/one-by-one, iteration by iteration. Before the timing, the
// outputs are read: a report for every context, none with an error, each
// showing its whole cluster (verifyCheck), and each render a DaemonSet. A
// benchmark, never a timed assertion: `make bench-fleet` runs it, and
// docs/dev/gitops.md quotes it.
func BenchmarkFleetScale(b *testing.B) {
	renderer := testtools.Renderer(b)
	requireGNUTime(b)
	sizes := fleetSizes(b)
	f := startFleet(b, slices.Max(sizes))
	for _, n := range sizes {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			clusters := f.clusters[:n]
			b.Log(f.took)
			kubeconfig, contexts := fleetKubeconfig(b, clusters)
			// Helm's directories and a home of the benchmark's own.
			env := append(testtools.HelmEnv(b), "HOME="+b.TempDir())
			checkCommand := func(args ...string) command {
				return command{name: "check", path: renderer, env: env, exits: []int{0, 1},
					args: append([]string{"check", "--kubeconfig", kubeconfig, "-o", "json"}, args...)}
			}
			all := checkCommand("--all-contexts")
			var each, renders []command
			for i, s := range clusters {
				each = append(each, checkCommand("--kube-context", contexts[i]))
				renders = append(renders, command{name: "template", path: renderer, env: env, exits: []int{0}, args: s.renderArgs(b)})
			}

			// The warm-ups: each command once, its output read.
			byContext := make(map[string]*seeded)
			for i, s := range clusters {
				byContext[contexts[i]] = s
			}
			verifyCheck(b, byContext, all.output(b))
			for i, c := range each {
				verifyCheck(b, map[string]*seeded{contexts[i]: clusters[i]}, c.output(b))
			}
			for _, c := range renders {
				verifyRender(b, c.output(b))
			}

			var alls, eachs, rendered []sample
			serverCPU, start := f.cpu(b), time.Now()
			for b.Loop() {
				alls = append(alls, all.measure(b))
				eachs = append(eachs, measureEach(b, each))
				rendered = append(rendered, measureEach(b, renders))
			}
			b.Log(f.usage(b, f.cpu(b)-serverCPU, time.Since(start)))
			report(b, "rounds", commandLine("all-contexts", "all", alls), commandLine("one by one", "each", eachs),
				ratioLine("all/each", alls, eachs), commandLine("renders", "render", rendered))
		})
	}
}

// fleet is the clusters of the largest fleet, their etcd, and how long
// they took to start and seed.
type fleet struct {
	clusters []*seeded
	etcd     *harness.Etcd
	took     string
}

// startFleet starts n API servers on one etcd, fleetStarters at a time,
// and seeds them one after the other; the benchmark's cleanup stops them,
// then etcd.
func startFleet(b *testing.B, n int) *fleet {
	b.Helper()
	ctx := context.Background()
	bin := binaries(b)
	start := time.Now()
	etcd, err := harness.StartEtcd(ctx, bin)
	if err != nil {
		b.Fatal("starting etcd: ", err)
	}
	cps := make([]*harness.ControlPlane, n)
	b.Cleanup(func() {
		var wg sync.WaitGroup
		for _, cp := range cps {
			if cp != nil {
				wg.Go(cp.Stop)
			}
		}
		wg.Wait()
		etcd.Stop()
	})
	parallel(b, "control planes", n, fleetStarters, func(i int) (err error) {
		cps[i], err = harness.Start(ctx, bin, nil, harness.SharedEtcd(etcd))
		return err
	})
	started := time.Since(start)
	f := &fleet{etcd: etcd}
	for i, cp := range cps {
		c := fleetCluster
		c.distro = fleetDistros[i%len(fleetDistros)]
		f.clusters = append(f.clusters, fill(b, bin, cp, c))
	}
	f.took = fmt.Sprintf("%d API servers (one etcd) started in %s, seeded with %d nodes and %d pods each in %s",
		n, started.Round(time.Second), fleetCluster.nodes, fleetCluster.pods, (time.Since(start) - started).Round(time.Second))
	return f
}

// servers are the fleet's API servers, then etcd.
func (f *fleet) servers() []*harness.Process {
	var ps []*harness.Process
	for _, s := range f.clusters {
		ps = append(ps, s.cp.Process("kube-apiserver"))
	}
	return append(ps, f.etcd.Process())
}

// cpu is the CPU time the servers have used so far.
func (f *fleet) cpu(b *testing.B) time.Duration {
	b.Helper()
	var sum time.Duration
	for _, p := range f.servers() {
		t, err := p.CPU()
		if err != nil {
			b.Fatal(err)
		}
		sum += t
	}
	return sum
}

// usage is a line on the CPU time the servers used in a span of the
// benchmark (on the machine that runs check: serving it, and ticking over
// when idle), their memory now, and how much memory the machine has left.
func (f *fleet) usage(b *testing.B, cpu, span time.Duration) string {
	b.Helper()
	mib := func(n int64) string { return strconv.FormatInt(n>>20, 10) }
	var rss []int64
	var total int64
	servers := f.servers()
	for _, p := range servers[:len(servers)-1] {
		r, err := p.RSS()
		if err != nil {
			b.Fatal(err)
		}
		rss, total = append(rss, r), total+r
	}
	slices.Sort(rss)
	etcdRSS, err := f.etcd.Process().RSS()
	if err != nil {
		b.Fatal(err)
	}
	line := fmt.Sprintf("the %d API servers and etcd used %.1f CPU-s in the rounds' %.1f s; RSS of each API server min/median/max %s/%s/%s MiB, %s MiB in all; etcd %s MiB",
		len(rss), cpu.Seconds(), span.Seconds(), mib(rss[0]), mib(rss[len(rss)/2]), mib(rss[len(rss)-1]), mib(total), mib(etcdRSS))
	if meminfo, err := os.ReadFile("/proc/meminfo"); err == nil {
		for l := range strings.Lines(string(meminfo)) {
			if v, ok := strings.CutPrefix(l, "MemAvailable:"); ok {
				line += "; MemAvailable " + strings.TrimSpace(v)
			}
		}
	}
	return line
}

// fleetKubeconfig writes one kubeconfig with a context for each cluster
// (the cluster and user of its own kubeconfig), named after its place and
// distribution, and returns its path and the contexts' names.
func fleetKubeconfig(b *testing.B, clusters []*seeded) (string, []string) {
	b.Helper()
	merged := clientcmdapi.NewConfig()
	var contexts []string
	for i, s := range clusters {
		own, err := clientcmd.LoadFromFile(s.cp.Kubeconfig)
		if err != nil {
			b.Fatal(err)
		}
		cur := own.Contexts[own.CurrentContext]
		name := fmt.Sprintf("cluster-%03d-%s", i, s.cluster.distro)
		merged.Clusters[name], merged.AuthInfos[name] = own.Clusters[cur.Cluster], own.AuthInfos[cur.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
		contexts = append(contexts, name)
	}
	merged.CurrentContext = contexts[0]
	path := filepath.Join(b.TempDir(), "fleet.kubeconfig")
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		b.Fatal(err)
	}
	return path, contexts
}

// verifyRender fails the benchmark unless the render's output holds the
// CCM's DaemonSet.
func verifyRender(b *testing.B, out []byte) {
	b.Helper()
	objs, err := harness.Decode(out)
	if err != nil {
		b.Fatal("template: ", err)
	}
	if !slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == "DaemonSet" }) {
		b.Fatalf("template: no DaemonSet in %d objects", len(objs))
	}
}
