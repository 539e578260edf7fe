package plan_test

import (
	"bytes"
	"math/rand"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/plan"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// hostileWord is a random printable word made of what a shell reads
// specially: quotes, expansions, separators, globs, comments, spaces, and
// some non-ASCII text (no control characters: every command refuses
// those).
func hostileWord(r *rand.Rand) string {
	const special = `'"$` + "`" + `\;|&<>(){}[]*?!#~ =-%^,.:@/` + "\u00a0é✓"
	const plain = "abcXYZ019"
	sp := []rune(special)
	n := 1 + r.Intn(12)
	w := make([]rune, n)
	for i := range w {
		w[i] = rune(plain[r.Intn(len(plain))])
	}
	// One to three of the special characters, so that each gets reached
	// alone as often as together.
	for k := 1 + r.Intn(3); k > 0; k-- {
		w[r.Intn(n)] = sp[r.Intn(len(sp))]
	}
	return string(w)
}

// TestHostileInputsStayOneWord: a plan copies the chart and the repository
// it is given into its commands. Whatever they hold, a POSIX shell (the
// real one) reads each command that has an argv as exactly that argv, and
// a script quotes the value the same way: no input becomes a second word, a
// second command, an expansion or a comment.
func TestHostileInputsStayOneWord(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("no sh on PATH: the test runs the commands' words through a real POSIX shell")
	}
	r := rand.New(rand.NewSource(45))
	checked, scripts, refused := 0, 0, 0
	for i := 0; i < 100; i++ {
		d := plan.Distros[i%len(plan.Distros)]
		chart, repo := "./"+hostileWord(r)+".tgz", "https://charts.example.com/"+hostileWord(r)
		o := plan.DefaultOptions()
		o.Distro, o.Chart = d, chart
		if i%3 == 1 {
			o.Chart, o.Repo = "aws-cloud-controller-manager", repo
		}
		if i%2 == 0 {
			o.From, o.KubeVersion = plan.FromNew, "v1.32.4"
			if d == distros.RKE2 && i%4 == 0 {
				o.From = plan.FromBuiltin
			}
		}
		p, err := plan.Build(o)
		if err != nil {
			refused++
			if refused < 4 {
				t.Logf("refused: %v", err)
			}
			// A value the plan refuses is fine; it says so in one line.
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("%+v: a refusal of more than one line: %q", o, err)
			}
			continue
		}
		value := o.Chart
		if o.Repo != "" {
			value = o.Repo
		}
		for _, c := range allCommands(p) {
			if len(c.Argv) == 0 {
				if strings.Contains(c.Shell, value) && !strings.Contains(c.Shell, plan.Quote(value)) {
					t.Errorf("a script copies %q unquoted:\n%s", value, c.Shell)
				}
				scripts++
				continue
			}
			if !slices.Contains(c.Argv, value) && !slices.ContainsFunc(c.Argv, func(a string) bool { return strings.HasSuffix(a, "="+value) }) {
				continue
			}
			// printf prints each word the shell reads, NUL-ended: the
			// program's name first.
			var out, errOut bytes.Buffer
			cmd := exec.Command(sh, "-c", `printf '%s\0' `+c.Shell)
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("sh reads %q as something else than a command (%v: %s)", c.Shell, err, errOut.String())
			}
			got := strings.Split(strings.TrimSuffix(out.String(), "\x00"), "\x00")
			if !slices.Equal(got, c.Argv) {
				t.Errorf("sh reads\n%s\nas %q, the plan's argv is %q", c.Shell, got, c.Argv)
			}
			checked++
		}
	}
	t.Logf("%d plans refused their hostile input", refused)
	if checked < 80 {
		t.Fatalf("only %d commands (80 wanted) carried a hostile value: the test no longer reaches the plans' commands", checked)
	}
	t.Logf("%d commands with a hostile chart or repository read back by sh as their argv; %d scripts checked for an unquoted copy", checked, scripts)
}
