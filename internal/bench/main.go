// Command bench compares aws-ccm-renderer, as a separate process the way Helm
// runs it, with peers measured in the same run: cat and a bare Go program
// that copies stdin to stdout, built in the same run (the floors: a process,
// and a Go process), a kustomize-as-post-renderer wrapper that applies only
// the placement patch, and a kyaml read-and-write round trip.
// `make bench` runs it; it prints a table and exits non-zero only when a
// command fails, never because of a time.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/benchdata"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type result struct {
	median, p90 time.Duration
	maxRSS      int64 // bytes
}

// measure runs a command n times with input on stdin and the output thrown
// away, and returns the median and 90th percentile wall time and the
// largest peak RSS.
func measure(n int, input string, name string, args ...string) (result, error) {
	return measureVia(false, n, input, name, args...)
}

// measureVia is measure with stdin a pipe (as Helm runs a post-renderer)
// when pipe is true, else the file itself.
func measureVia(pipe bool, n int, input string, name string, args ...string) (result, error) {
	var times []time.Duration
	var rss int64
	for i := 0; i < n; i++ {
		in, err := os.Open(input)
		if err != nil {
			return result{}, err
		}
		cmd := exec.Command(name, args...)
		cmd.Stdin = in
		if pipe {
			cmd.Stdin = struct{ io.Reader }{in} // not an *os.File: exec copies it through a pipe
		}
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		start := time.Now()
		err = cmd.Run()
		el := time.Since(start)
		in.Close()
		if err != nil {
			return result{}, fmt.Errorf("%s: %v: %s", filepath.Base(name), err, errOut.Bytes())
		}
		times = append(times, el)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss*1024 > rss {
			rss = ru.Maxrss * 1024
		}
	}
	slices.Sort(times)
	return result{median: times[len(times)/2], p90: times[len(times)*9/10], maxRSS: rss}, nil
}

func tool(env, fallback string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	return fallback
}

// bench is one run's tools and scratch directory.
type bench struct {
	renderer, baseline, helm, kustomize string
	work                                string
}

func run() error {
	root, _ := os.Getwd()
	b := bench{
		renderer:  tool("AWS_CCM_RENDERER", filepath.Join(root, "bin", "aws-ccm-renderer")),
		baseline:  os.Getenv("AWS_CCM_RENDERER_BASELINE"), // another build, measured beside it
		helm:      tool("HELM3", filepath.Join(root, "bin", "helm")),
		kustomize: tool("KUSTOMIZE", filepath.Join(root, "bin", "kustomize")),
	}
	var err error
	if b.work, err = os.MkdirTemp("", "aws-ccm-bench"); err != nil {
		return err
	}
	defer os.RemoveAll(b.work)
	if err := b.chart(root); err != nil {
		return err
	}
	if err := b.umbrellas(); err != nil {
		return err
	}
	return kyamlPeer()
}

// chartOutput renders the latest upstream chart with Helm into a file.
func (b bench) chartOutput(root string) (string, int, error) {
	chart := filepath.Join(root, "..", "shared", "charts", "aws-cloud-controller-manager-0.0.11.tgz")
	if c := os.Getenv("AWS_CCM_CHART"); c != "" {
		chart = c
	}
	if _, err := os.Stat(chart); err != nil {
		chart = filepath.Join(root, ".cache", "charts", "aws-cloud-controller-manager-0.0.11.tgz")
	}
	tmpl := exec.Command(b.helm, "template", "ccm", chart, "--namespace", "kube-system")
	tmpl.Env = append(os.Environ(), "HELM_CACHE_HOME="+b.work, "HELM_CONFIG_HOME="+b.work, "HELM_DATA_HOME="+b.work)
	out, err := tmpl.Output()
	if err != nil {
		return "", 0, fmt.Errorf("helm template %s: %v", chart, err)
	}
	file := filepath.Join(b.work, "chart.yaml")
	return file, len(out), os.WriteFile(file, out, 0o644)
}

// chart measures one release of the latest upstream chart, one process per
// render, beside cat, a kustomize post-renderer and the Helm SDK build.
func (b bench) chart(root string) error {
	small, size, err := b.chartOutput(root)
	if err != nil {
		return err
	}
	wrapper := filepath.Join(b.work, "kustomize-postrenderer.sh")
	if err := os.WriteFile(wrapper, []byte(kustomizeWrapper), 0o755); err != nil {
		return err
	}
	os.Setenv("KUSTOMIZE", b.kustomize)

	const runs = 31
	fmt.Printf("aws-ccm-renderer benchmark (%d runs per command; median, p90)\n\n", runs)
	fmt.Printf("1. helm template of chart 0.0.11 (%d bytes), one process per render\n", size)
	bare, err := b.bareGo()
	if err != nil {
		return err
	}
	floor, err := b.kyamlFloor(root)
	if err != nil {
		return err
	}
	commands := []struct {
		name string
		argv []string
	}{
		{"cat", []string{"cat"}},
		{"bare Go stdin to stdout", []string{bare}},
		{"kyaml read and write, no filter", []string{floor}},
		{"aws-ccm-renderer --distro=rke2", []string{b.renderer, "--distro=rke2"}},
		{"kustomize wrapper (placement patch only)", []string{wrapper}},
		{"aws-ccm-renderer-helm (Helm SDK linked)", []string{filepath.Join(filepath.Dir(b.renderer), "aws-ccm-renderer-helm"), "--distro=rke2"}},
	}
	if b.baseline != "" {
		commands = append(commands, struct {
			name string
			argv []string
		}{"baseline build --distro=rke2", []string{b.baseline, "--distro=rke2"}})
	}
	results := map[string]result{}
	for _, c := range commands {
		r, err := measure(runs, small, c.argv[0], c.argv[1:]...)
		if err != nil {
			return err
		}
		results[c.name] = r
		fmt.Printf("   %-40s %8.2f ms %8.2f ms %7.1f MiB\n", c.name, ms(r.median), ms(r.p90), float64(r.maxRSS)/(1<<20))
	}
	ren, cat, kus := results[commands[3].name], results["cat"], results[commands[4].name]
	withSDK, goFloor, kyFloor := results[commands[5].name], results[commands[1].name], results[commands[2].name]
	fmt.Printf("   renderer vs kustomize wrapper: %.1fx faster; renderer vs cat: %.1fx the time; vs a bare Go program: %.1fx; vs kyaml's own read and write: %.1fx (kyaml alone: %.1fx a bare Go program)\n",
		float64(kus.median)/float64(ren.median), float64(ren.median)/float64(cat.median), float64(ren.median)/float64(goFloor.median),
		float64(ren.median)/float64(kyFloor.median), float64(kyFloor.median)/float64(goFloor.median))
	fmt.Printf("   linking the Helm SDK costs %.1f ms per process (%.1fx the lean binary's time): why the chart wrapper commands live in aws-ccm-renderer-helm\n",
		ms(withSDK.median-ren.median), float64(withSDK.median)/float64(ren.median))
	if base, ok := results["baseline build --distro=rke2"]; ok {
		fmt.Printf("   renderer vs baseline build: %.2fx the time\n", float64(ren.median)/float64(base.median))
	}
	fmt.Println()
	return nil
}

// kyamlFloor builds internal/bench/kyamlfloor: kyaml's read and write of
// the stream, no filter.
func (b bench) kyamlFloor(root string) (string, error) {
	bin := filepath.Join(b.work, "kyamlfloor")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./internal/bench/kyamlfloor")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the kyaml floor: %v\n%s", err, out)
	}
	return bin, nil
}

// bareGo builds a Go program that copies stdin to stdout and nothing else,
// with the Go that runs the benchmark: the floor of any Go post-renderer.
func (b bench) bareGo() (string, error) {
	dir := filepath.Join(b.work, "bare")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := "package main\n\nimport (\n\t\"io\"\n\t\"os\"\n)\n\nfunc main() {\n\tif _, err := io.Copy(os.Stdout, os.Stdin); err != nil {\n\t\tos.Exit(1)\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module bare\n\ngo 1.26\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bare")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the bare Go program: %v\n%s", err, out)
	}
	return bin, nil
}

// umbrellaSizes are the umbrella streams' sizes, in documents: 10,000,
// and the most tens of thousands that still fit the input bound the
// renderer reads (safefile.MaxRead, 64 MiB), above which it refuses.
func umbrellaSizes() []int {
	const step = 10000
	big := step * int(safefile.MaxRead/int64(len(benchdata.Umbrella(step))))
	for big > step && int64(len(benchdata.Umbrella(big))) > safefile.MaxRead {
		big -= step
	}
	return []int{step, big}
}

// umbrellas measures umbrella streams with the CCM inside, one process per
// render, from a file and through a pipe.
func (b bench) umbrellas() error {
	fmt.Println("2. umbrella streams with the CCM inside, one process per render")
	var base result
	var baseSize int
	for i, docs := range umbrellaSizes() {
		data := benchdata.Umbrella(docs)
		file := filepath.Join(b.work, fmt.Sprintf("umbrella-%d.yaml", docs))
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return err
		}
		n := 7
		if i > 0 {
			n = 3
		}
		c, err := measure(n, file, "cat")
		if err != nil {
			return err
		}
		r, err := measure(n, file, b.renderer, "--distro=rke2")
		if err != nil {
			return err
		}
		p, err := measureVia(true, n, file, b.renderer, "--distro=rke2")
		if err != nil {
			return err
		}
		mb := float64(len(data)) / 1e6
		fmt.Printf("   %6d documents, %6.1f MB: cat %6.1f ms; renderer %8.1f ms = %6.1f MB/s, peak RSS %6.1f MiB = %.2fx the input\n",
			docs, mb, ms(c.median), ms(r.median), mb/r.median.Seconds(), float64(r.maxRSS)/(1<<20), float64(r.maxRSS)/float64(len(data)))
		fmt.Printf("   %30s  through a pipe %8.1f ms = %6.1f MB/s, peak RSS %6.1f MiB = %.2fx the input\n",
			"", ms(p.median), mb/p.median.Seconds(), float64(p.maxRSS)/(1<<20), float64(p.maxRSS)/float64(len(data)))
		if b.baseline != "" {
			bl, err := measure(n, file, b.baseline, "--distro=rke2")
			if err != nil {
				return err
			}
			fmt.Printf("   %30s  baseline build %8.1f ms: the renderer takes %.2fx its time\n", "", ms(bl.median), float64(r.median)/float64(bl.median))
		}
		if i == 0 {
			base, baseSize = r, len(data)
		} else {
			fmt.Printf("   %.1fx the input took %.2fx the time\n", float64(len(data))/float64(baseSize), float64(r.median)/float64(base.median))
		}
		os.Remove(file)
	}
	return nil
}

// kyamlPeer times kyaml's read-and-write round trip of the 10,000-document
// stream in process: what parsing every document would cost.
func kyamlPeer() error {
	data := benchdata.Umbrella(10000)
	start := time.Now()
	var out bytes.Buffer
	if err := (kio.Pipeline{
		Inputs:  []kio.Reader{&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}},
		Outputs: []kio.Writer{kio.ByteWriter{Writer: &out}},
	}).Execute(); err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Printf("\n3. kyaml read-and-write round trip of the 10,000-document stream, in process: %.0f ms = %.1f MB/s\n",
		ms(el), float64(len(data))/1e6/el.Seconds())
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// kustomizeWrapper is the peer post-renderer: kustomize build over the
// stream with one patch that sets the RKE2 nodeSelector.
const kustomizeWrapper = `#!/bin/sh
set -e
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat > "$d/all.yaml"
cat > "$d/kustomization.yaml" <<'EOF'
resources:
- all.yaml
patches:
- target:
    kind: DaemonSet
  patch: |
    - op: replace
      path: /spec/template/spec/nodeSelector
      value:
        node-role.kubernetes.io/control-plane: "true"
EOF
"$KUSTOMIZE" build "$d"
`
