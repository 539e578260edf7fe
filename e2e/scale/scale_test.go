// Package scale measures `aws-ccm-renderer check` on large clusters against
// a peer measured in the same run: `kubectl get nodes -o json`, one read of
// every node, the least that looks at a whole cluster. Each size is a control plane of its
// own (e2e/harness: etcd and kube-apiserver 1.34, the DaemonSet
// controller) seeded with nodes, pods and the CCM (seed), one node's
// kubernetes.io/hostname label not its name, so that check also pages
// through the pods of every namespace for those pinned to it.
//
// The figures are whole processes, the two commands in turn, one pair per
// iteration after a warm-up of each: wall time, CPU time and peak resident
// memory (GNU time's, /usr/bin/time -v's "Maximum resident set size"),
// with the ratio check/kubectl pair by pair. A benchmark, never a timed assertion:
// `make bench-scale` runs it (go test without -bench never does), and
// docs/check.md quotes it. The aim: check within 1.5x of kubectl, in time
// and in memory.
package scale

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// size is a cluster measured: how many nodes and pods.
type size struct{ nodes, pods int }

// defaultSizes are the clusters measured unless $E2E_SCALE_SIZES names
// others, as NODES/PODS[,NODES/PODS...] (200/2000 for a quick look).
var defaultSizes = []size{{2000, 20000}, {5000, 50000}}

func sizes(b *testing.B) []size {
	b.Helper()
	v := os.Getenv("E2E_SCALE_SIZES")
	if v == "" {
		return defaultSizes
	}
	var out []size
	for _, f := range strings.Split(v, ",") {
		var s size
		if _, err := fmt.Sscanf(f, "%d/%d", &s.nodes, &s.pods); err != nil || s.nodes <= controlPlaneNodes || s.pods < pinnedPods {
			b.Fatalf("$E2E_SCALE_SIZES: %q is not NODES/PODS with more than %d nodes and at least %d pods", f, controlPlaneNodes, pinnedPods)
		}
		out = append(out, s)
	}
	return out
}

func BenchmarkCheckScale(b *testing.B) {
	renderer := testtools.Renderer(b)
	kubectl := kubectlBinary(b)
	if err := exec.Command(gnuTime, "-f", "%M", "true").Run(); err != nil {
		b.Fatalf("the benchmark measures peak memory with GNU time, %s: %v (Debian and Ubuntu: apt-get install time)", gnuTime, err)
	}
	for _, size := range sizes(b) {
		b.Run(fmt.Sprintf("nodes=%d,pods=%d", size.nodes, size.pods), func(b *testing.B) {
			s := seed(b, size.nodes, size.pods)
			// Helm's directories and a home (kubectl's discovery cache) of
			// the benchmark's own.
			env := append(testtools.HelmEnv(b), "HOME="+b.TempDir())
			check := command{name: "check", path: renderer, env: env, exits: []int{0, 1},
				args: []string{"check", "--kubeconfig", s.cp.Kubeconfig, "-o", "json"}}
			peer := command{name: "kubectl", path: kubectl, env: env, exits: []int{0},
				args: []string{"--kubeconfig", s.cp.Kubeconfig, "get", "nodes", "-o", "json"}}

			// The warm-ups: each command once, its output read to see
			// that it read the whole cluster.
			verifyCheck(b, s, size.nodes, check.output(b))
			var nodes struct{ Items []json.RawMessage }
			if err := json.Unmarshal(peer.output(b), &nodes); err != nil || len(nodes.Items) != size.nodes {
				b.Fatalf("kubectl get nodes -o json: %d nodes, want %d (%v)", len(nodes.Items), size.nodes, err)
			}

			var pairs []pair
			for b.Loop() {
				pairs = append(pairs, pair{check.measure(b), peer.measure(b)})
			}
			report(b, pairs)
		})
	}
}

// kubectlBinary is $KUBECTL, else bin/kubectl, built with make
// tools-kubectl when it is missing.
func kubectlBinary(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("KUBECTL"); p != "" {
		return p
	}
	p := filepath.Join(testtools.Root(), "bin", "kubectl")
	if _, err := os.Stat(p); err != nil {
		if out, err := exec.Command("make", "-s", "-C", testtools.Root(), "tools-kubectl").CombinedOutput(); err != nil {
			b.Fatalf("make tools-kubectl: %v\n%s", err, out)
		}
	}
	return p
}

// verifyCheck fails the benchmark unless check's JSON report shows the
// whole cluster: every node, the CCM on the control-plane nodes, and the
// hostname finding of the pinned node with the Deployment and the
// PersistentVolume pinned to its label (so the pods of every namespace were
// read).
func verifyCheck(b *testing.B, s *seeded, nodes int, out []byte) {
	b.Helper()
	type finding struct{ Area, Subject, Message string }
	var res struct {
		Clusters []struct {
			Error    string
			Summary  struct{ Nodes, ControlPlaneNodes, CCMOnControlPlane int }
			Findings []finding
		}
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Clusters) != 1 {
		b.Fatalf("check -o json: %v\n%.2000s", err, out)
	}
	c := res.Clusters[0]
	if c.Error != "" || c.Summary.Nodes != nodes || c.Summary.ControlPlaneNodes != controlPlaneNodes || c.Summary.CCMOnControlPlane != controlPlaneNodes {
		b.Fatalf("check -o json: error %q, summary %+v; want %d nodes, the CCM on %d control-plane nodes", c.Error, c.Summary, nodes, controlPlaneNodes)
	}
	pinned := slices.ContainsFunc(c.Findings, func(f finding) bool {
		return f.Area == "hostname" && f.Subject == s.pinnedNode &&
			strings.Contains(f.Message, "Deployment "+pinnedNamespace+"/"+pinnedApp) && strings.Contains(f.Message, "PersistentVolume local-pv-pinned")
	})
	if !pinned {
		b.Fatalf("check -o json: no hostname finding for %s with Deployment %s/%s and PersistentVolume local-pv-pinned pinned to %s; findings: %+v",
			s.pinnedNode, pinnedNamespace, pinnedApp, pinnedHost, c.Findings)
	}
}

// command is a program the benchmark runs as a whole process.
type command struct {
	name, path string
	args, env  []string
	exits      []int // the exit codes it may end with
}

// sample is one finished run of a command.
type sample struct {
	wall, cpu time.Duration
	rss       int64 // peak resident memory, bytes
}

// pair is one run of check and one of kubectl, in that order.
type pair struct{ check, kubectl sample }

// output runs the command and returns what it printed.
func (c command) output(b *testing.B) []byte {
	b.Helper()
	var out bytes.Buffer
	c.run(b, &out)
	return out.Bytes()
}

// gnuTime is GNU time, which the benchmark starts each measured command
// under for its peak RSS. A program this process starts runs in this
// process's memory until its exec (Go starts programs with vfork), and
// the kernel counts that memory into the program's own peak: the
// benchmark, with its seeding client and kubectl's output read, would lay
// a floor of hundreds of MiB under check's figure. GNU time forks the
// command from its own small process and reports the command's peak
// (%M, the "Maximum resident set size" of time -v).
const gnuTime = "/usr/bin/time"

// measure runs the command under GNU time with its output thrown away
// (/dev/null): the wall time as this process sees it, the CPU time of the
// command (GNU time's own is in it, next to nothing), its peak RSS as GNU
// time reports it.
func (c command) measure(b *testing.B) sample {
	b.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	report := filepath.Join(b.TempDir(), "time")
	timed := c
	timed.path, timed.args = gnuTime, append([]string{"-f", "%M", "-o", report, c.path}, c.args...)
	s := timed.run(b, null)
	// The last line is %M, KiB (before it, when the command failed, the
	// exit status).
	out, err := os.ReadFile(report)
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		b.Fatalf("%s: %q is not a peak RSS in KiB", gnuTime, out)
	}
	s.rss = kib << 10
	return s
}

// run runs the command, its output to stdout (a file is handed to it as
// it is, without a pipe), and fails the benchmark on an exit code it may
// not end with.
func (c command) run(b *testing.B, stdout io.Writer) sample {
	b.Helper()
	cmd := exec.Command(c.path, c.args...)
	cmd.Env, cmd.Stdout = c.env, stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if code := testtools.ExitCode(err); !slices.Contains(c.exits, code) {
		b.Fatalf("%s %s: exit %d (%v)\n%s", c.name, strings.Join(c.args, " "), code, err, stderr.String())
	}
	ps := cmd.ProcessState
	return sample{wall: wall, cpu: ps.UserTime() + ps.SystemTime()}
}

// report sets the benchmark's figures to the medians, with the ratios
// check/kubectl of each pair (no ns/op: an iteration is a pair of
// processes), and logs each figure's minimum, median and maximum, a line
// per command and one of the ratios (go test keeps ten lines of a
// benchmark's log).
func report(b *testing.B, pairs []pair) {
	b.Helper()
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	type figure struct {
		name, metric string
		of           func(p pair) float64
	}
	lines := []struct {
		name    string
		figures []figure
	}{
		{"check", []figure{
			{"wall s", "check-s", func(p pair) float64 { return p.check.wall.Seconds() }},
			{"cpu s", "check-cpu-s", func(p pair) float64 { return p.check.cpu.Seconds() }},
			{"peak RSS MiB", "check-MiB", func(p pair) float64 { return mib(p.check.rss) }},
		}},
		{"kubectl", []figure{
			{"wall s", "kubectl-s", func(p pair) float64 { return p.kubectl.wall.Seconds() }},
			{"cpu s", "kubectl-cpu-s", func(p pair) float64 { return p.kubectl.cpu.Seconds() }},
			{"peak RSS MiB", "kubectl-MiB", func(p pair) float64 { return mib(p.kubectl.rss) }},
		}},
		{"check/kubectl", []figure{
			{"wall", "time-ratio", func(p pair) float64 { return p.check.wall.Seconds() / p.kubectl.wall.Seconds() }},
			{"peak RSS", "rss-ratio", func(p pair) float64 { return float64(p.check.rss) / float64(p.kubectl.rss) }},
		}},
	}
	b.ReportMetric(0, "ns/op")
	var log strings.Builder
	fmt.Fprintf(&log, "%d pairs, min/median/max:", len(pairs))
	for _, l := range lines {
		fmt.Fprintf(&log, "\n%-13s", l.name)
		for i, f := range l.figures {
			var v []float64
			for _, p := range pairs {
				v = append(v, f.of(p))
			}
			slices.Sort(v)
			med := v[len(v)/2]
			if len(v)%2 == 0 {
				med = (v[len(v)/2-1] + v[len(v)/2]) / 2
			}
			b.ReportMetric(med, f.metric)
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(&log, "%s %s %s/%s/%s", sep, f.name, num(v[0]), num(med), num(v[len(v)-1]))
		}
	}
	b.Log(log.String())
}

// num prints a figure with three significant digits.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }
