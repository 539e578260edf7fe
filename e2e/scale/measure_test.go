package scale

import (
	"bytes"
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

// plus is two runs one after the other: their wall and CPU times added,
// the higher of their peaks.
func (s sample) plus(t sample) sample {
	return sample{wall: s.wall + t.wall, cpu: s.cpu + t.cpu, rss: max(s.rss, t.rss)}
}

// output runs the command and returns what it printed.
func (c command) output(b *testing.B) []byte {
	b.Helper()
	var out bytes.Buffer
	c.run(b, &out)
	return out.Bytes()
}

// requireGNUTime fails the benchmark unless GNU time is there.
func requireGNUTime(b *testing.B) {
	b.Helper()
	if err := exec.Command(gnuTime, "-f", "%M", "true").Run(); err != nil {
		b.Fatalf("the benchmark measures peak memory with GNU time, %s: %v (Debian and Ubuntu: apt-get install time)", gnuTime, err)
	}
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

// measureEach runs the commands one after the other, each measured as
// measure does, and returns their sum (sample.plus).
func measureEach(b *testing.B, cs []command) sample {
	b.Helper()
	var sum sample
	for _, c := range cs {
		sum = sum.plus(c.measure(b))
	}
	return sum
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

// line is a line of report: a command's figures, or the ratios of two
// commands'.
type line struct {
	name    string
	figures []figure
}

// figure is one figure of each iteration: its name in the log, and the
// unit of the metric that reports its median.
type figure struct {
	name, metric string
	values       []float64
}

// of is the figure of each sample.
func of(samples []sample, f func(sample) float64) []float64 {
	var v []float64
	for _, s := range samples {
		v = append(v, f(s))
	}
	return v
}

// commandLine is a command's line: wall time, CPU time and peak RSS, the
// metrics named METRIC-s, METRIC-cpu-s and METRIC-MiB.
func commandLine(name, metric string, samples []sample) line {
	return line{name, []figure{
		{"wall s", metric + "-s", of(samples, func(s sample) float64 { return s.wall.Seconds() })},
		{"cpu s", metric + "-cpu-s", of(samples, func(s sample) float64 { return s.cpu.Seconds() })},
		{"peak RSS MiB", metric + "-MiB", of(samples, func(s sample) float64 { return float64(s.rss) / (1 << 20) })},
	}}
}

// ratioLine is the ratios a/b of two commands' samples, iteration by
// iteration: wall time, CPU time and peak RSS (time-ratio, cpu-ratio,
// rss-ratio).
func ratioLine(name string, a, b []sample) line {
	ratios := func(f func(sample) float64) []float64 {
		var v []float64
		for i := range a {
			v = append(v, f(a[i])/f(b[i]))
		}
		return v
	}
	return line{name, []figure{
		{"wall", "time-ratio", ratios(func(s sample) float64 { return s.wall.Seconds() })},
		{"cpu", "cpu-ratio", ratios(func(s sample) float64 { return s.cpu.Seconds() })},
		{"peak RSS", "rss-ratio", ratios(func(s sample) float64 { return float64(s.rss) })},
	}}
}

// report sets the benchmark's figures to the medians over the iterations
// (no ns/op: an iteration is several processes), and logs each figure's
// minimum, median and maximum, a line per command or ratio (go test keeps
// ten lines of a benchmark's log).
func report(b *testing.B, iterations string, lines ...line) {
	b.Helper()
	b.ReportMetric(0, "ns/op")
	var log strings.Builder
	fmt.Fprintf(&log, "%d %s, min/median/max:", len(lines[0].figures[0].values), iterations)
	for _, l := range lines {
		fmt.Fprintf(&log, "\n%-13s", l.name)
		for i, f := range l.figures {
			v := slices.Sorted(slices.Values(f.values))
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
