// Package scale measures aws-ccm-renderer at scale, as whole processes
// against a peer measured in the same run: check on large clusters against
// kubectl (BenchmarkCheckScale), and check and the render over a fleet of
// clusters against the same one cluster at a time (BenchmarkFleetScale).
//
// BenchmarkCheckScale measures `aws-ccm-renderer check` against
// `kubectl get nodes -o json`, one read of every node, the least that
// looks at a whole cluster. Each size is a control plane of its own
// (e2e/harness: etcd and kube-apiserver 1.37; the DaemonSet controller
// only until it has made the CCM's pods) seeded with nodes, pods and the
// CCM (seed), one node's kubernetes.io/hostname label not its name, so that
// check also pages through the pods of every namespace for those pinned to
// it.
//
// The figures are whole processes, the two commands in turn, one pair per
// iteration after a warm-up of each: wall time, CPU time and peak resident
// memory (GNU time's, /usr/bin/time -v's "Maximum resident set size"),
// with the ratio check/kubectl pair by pair. A benchmark, never a timed assertion:
// `make bench-scale` runs it (go test without -bench never does), and
// docs/dev/check.md quotes it. The aim: check within 1.5x of kubectl, in time
// and in memory.
package scale

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
)

// size is a cluster measured: how many nodes and pods.
type size struct{ nodes, pods int }

// defaultSizes are the clusters measured unless $E2E_SCALE_SIZES names
// others, as NODES/PODS[,NODES/PODS...] (200/2000 for a quick look).
var defaultSizes = []size{{2000, 20000}, {5000, 50000}}

func sizes(b *testing.B) []size {
	b.Helper()
	return fromEnv(b, "E2E_SCALE_SIZES", defaultSizes,
		fmt.Sprintf("NODES/PODS with more than %d nodes and at least %d pods", controlPlaneNodes, pinnedPods),
		func(f string) (s size, ok bool) {
			_, err := fmt.Sscanf(f, "%d/%d", &s.nodes, &s.pods)
			return s, err == nil && s.nodes > controlPlaneNodes && s.pods >= pinnedPods
		})
}

// fromEnv is what the environment variable name lists, comma-separated,
// each item read by parse (want says what it takes), or def when it is
// unset.
func fromEnv[T any](b *testing.B, name string, def []T, want string, parse func(string) (T, bool)) []T {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []T
	for _, f := range strings.Split(v, ",") {
		t, ok := parse(f)
		if !ok {
			b.Fatalf("$%s: %q is not %s", name, f, want)
		}
		out = append(out, t)
	}
	return out
}

func BenchmarkCheckScale(b *testing.B) {
	renderer := testtools.Renderer(b)
	kubectl := kubectlBinary(b)
	requireGNUTime(b)
	for _, size := range sizes(b) {
		b.Run(fmt.Sprintf("nodes=%d,pods=%d", size.nodes, size.pods), func(b *testing.B) {
			s := seed(b, cluster{nodes: size.nodes, pods: size.pods, distro: "kubeadm"})
			b.Log(s.took)
			// Helm's directories and a home (kubectl's discovery cache) of
			// the benchmark's own.
			env := append(testtools.HelmEnv(b), "HOME="+b.TempDir())
			check := command{name: "check", path: renderer, env: env, exits: []int{0, 1},
				args: []string{"check", "--kubeconfig", s.cp.Kubeconfig, "-o", "json"}}
			peer := command{name: "kubectl", path: kubectl, env: env, exits: []int{0},
				args: []string{"--kubeconfig", s.cp.Kubeconfig, "get", "nodes", "-o", "json"}}

			// The warm-ups: each command once, its output read to see
			// that it read the whole cluster.
			verifyCheck(b, map[string]*seeded{"e2e": s}, check.output(b)) // the harness's kubeconfig's context
			var nodes struct{ Items []json.RawMessage }
			if err := json.Unmarshal(peer.output(b), &nodes); err != nil || len(nodes.Items) != size.nodes {
				b.Fatalf("kubectl get nodes -o json: %d nodes, want %d (%v)", len(nodes.Items), size.nodes, err)
			}

			var checks, kubectls []sample
			for b.Loop() {
				checks, kubectls = append(checks, check.measure(b)), append(kubectls, peer.measure(b))
			}
			report(b, "pairs", commandLine("check", "check", checks), commandLine("kubectl", "kubectl", kubectls),
				ratioLine("check/kubectl", checks, kubectls))
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

// verifyCheck fails the benchmark unless check's JSON report has one
// report for each cluster, by its context, and each shows the whole cluster:
// every node, its distribution, the CCM on the control-plane nodes, and
// the hostname finding of the pinned node with the Deployment and the
// PersistentVolume pinned to its label (so the pods of every namespace
// were read).
func verifyCheck(b *testing.B, clusters map[string]*seeded, out []byte) {
	b.Helper()
	type finding struct{ Area, Subject, Message string }
	var res struct {
		Clusters []struct {
			Context, Error string
			Distribution   struct{ Detected string }
			Summary        struct{ Nodes, ControlPlaneNodes, CCMOnControlPlane int }
			Findings       []finding
		}
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Clusters) != len(clusters) {
		b.Fatalf("check -o json: %d clusters, want %d (%v)\n%.2000s", len(res.Clusters), len(clusters), err, out)
	}
	clusters = maps.Clone(clusters)
	for _, c := range res.Clusters {
		s := clusters[c.Context]
		if s == nil {
			b.Fatalf("check -o json: a report of context %q, which is not one of the %d clusters or came twice", c.Context, len(clusters))
		}
		delete(clusters, c.Context)
		if c.Error != "" || c.Summary.Nodes != s.cluster.nodes || c.Summary.ControlPlaneNodes != controlPlaneNodes ||
			c.Summary.CCMOnControlPlane != controlPlaneNodes || c.Distribution.Detected != s.cluster.distro {
			b.Fatalf("check -o json, context %q: error %q, %s, summary %+v; want %s, %d nodes, the CCM on %d control-plane nodes",
				c.Context, c.Error, c.Distribution.Detected, c.Summary, s.cluster.distro, s.cluster.nodes, controlPlaneNodes)
		}
		pinned := slices.ContainsFunc(c.Findings, func(f finding) bool {
			return f.Area == "hostname" && f.Subject == s.pinnedNode &&
				strings.Contains(f.Message, "Deployment "+pinnedNamespace+"/"+pinnedApp) && strings.Contains(f.Message, "PersistentVolume local-pv-pinned")
		})
		if !pinned {
			b.Fatalf("check -o json, context %q: no hostname finding for %s with Deployment %s/%s and PersistentVolume local-pv-pinned pinned to %s; findings: %+v",
				c.Context, s.pinnedNode, pinnedNamespace, pinnedApp, pinnedHost, c.Findings)
		}
	}
}
