package check

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// guardSnapshot is a kubeadm cluster of the API server version with the
// pods.
func guardSnapshot(kube string, pods ...corev1.Pod) *Snapshot {
	return &Snapshot{Now: testNow, KubernetesVersion: kube, Nodes: []corev1.Node{kubeadmCP("cp-1")}, ControlPlanePods: pods,
		Leases: map[string]*coordinationv1.Lease{}}
}

// kcmContainer is a controller manager's pod with one container of the
// command and args.
func kcmContainer(command, args []string, env ...corev1.EnvVar) corev1.Pod {
	p := kcmPod("cp-1", false)
	p.Spec.Containers[0].Command, p.Spec.Containers[0].Args, p.Spec.Containers[0].Env = command, args, env
	return p
}

// holds is every reason Hold gives, one line each.
func holds(s *Snapshot, in GuardInput) []string {
	var out []string
	for _, f := range Hold(s, in) {
		out = append(out, f.Area+": "+f.Subject+": "+f.Message+" (fix: "+f.Fix+")")
	}
	return out
}

// TestHoldUnreadableAPIVersion: an API server version the guard cannot
// read holds, saying what it read and what to do; so does a CCM version it
// cannot read, or none.
func TestHoldUnreadableAPIVersion(t *testing.T) {
	ext := kcmPod("cp-1", false, "--cloud-provider=external")
	for _, kube := range []string{"garbage", "", "v2.0.0", "v1.34.x", "v1.35.2;id", "1.034", "1.99999999999999999999", "v0.0.0-master+$Format:%H$"} {
		got := holds(guardSnapshot(kube, ext), GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.34.3"}})
		if len(got) != 1 || !strings.HasPrefix(got[0], "version: the API server's version: its /version says "+fmt.Sprintf("%q", kube)) ||
			!strings.Contains(got[0], "(fix: make the API server report its version") {
			t.Errorf("API server %q: %q; want one reason, the version", kube, got)
		}
	}
	for _, ccm := range [][]string{nil, {}, {"latest"}, {"v1.34.3", "v1.034.3"}} {
		got := holds(guardSnapshot("v1.34.2", ext), GuardInput{Mode: renderer.ModeInstall, CCMVersions: ccm})
		if len(got) != 1 || !strings.HasPrefix(got[0], "version: the CCM's version: ") {
			t.Errorf("CCM %q: %q; want one reason, the CCM's version", ccm, got)
		}
	}
}

// TestHoldEveryCCM: each CCM container's release is judged: one of another
// minor holds, whichever container it is.
func TestHoldEveryCCM(t *testing.T) {
	ext := kcmPod("cp-1", false, "--cloud-provider=external")
	for _, tags := range [][]string{{"v1.34.3", "v1.32.8"}, {"v1.32.8", "v1.34.3"}, {"v1.34.3", "v1.35.0"}} {
		got := holds(guardSnapshot("v1.34.2", ext), GuardInput{Mode: renderer.ModeInstall, CCMVersions: tags})
		if len(got) != 1 || strings.Contains(got[0], "CCM v1.34.3") {
			t.Errorf("CCMs %q: %q; want one reason, the misfit", tags, got)
		}
	}
	if got := holds(guardSnapshot("v1.34.2", ext), GuardInput{Mode: renderer.ModeInstall, CCMVersions: []string{"v1.34.3", "v1.33.4"}}); len(got) != 0 {
		t.Errorf("two CCMs that fit: %q", got)
	}
}

// TestHoldWrappedKCM: the in-tree controller manager is seen however its
// command is wrapped; what cannot be read holds.
func TestHoldWrappedKCM(t *testing.T) {
	const aws = "in-tree: kube-controller-manager on cp-1: --cloud-provider=aws, no leader migration"
	const unread = "in-tree: kube-controller-manager on cp-1: pod kube-controller-manager-cp-1: "
	env := func(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }
	secret := corev1.EnvVar{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "p"}}}
	for _, c := range []struct {
		name          string
		command, args []string
		env           []corev1.EnvVar
		want          string // "" may start
	}{
		{"plain", []string{"kube-controller-manager", "--cloud-provider=aws"}, nil, nil, aws},
		{"plain, external", []string{"kube-controller-manager", "--cloud-provider=external"}, nil, nil, ""},
		{"sh -c", []string{"sh", "-c", "kube-controller-manager --cloud-provider=aws"}, nil, nil, aws},
		{"/bin/sh -c", []string{"/bin/sh", "-c", "kube-controller-manager --cloud-provider=aws"}, nil, nil, aws},
		{"bash -lc", []string{"bash", "-lc", "exec /usr/local/bin/kube-controller-manager --cloud-provider=aws --v=2"}, nil, nil, aws},
		{"the script in args", []string{"/bin/sh", "-c"}, []string{"kube-controller-manager --cloud-provider=aws"}, nil, aws},
		{"split between command and args", []string{"kube-controller-manager"}, []string{"--cloud-provider=aws"}, nil, aws},
		{"two words", []string{"kube-controller-manager", "--cloud-provider", "aws"}, nil, nil, aws},
		{"two words in a script", []string{"sh", "-c", "kube-controller-manager --cloud-provider aws"}, nil, nil, aws},
		{"underscores", []string{"kube-controller-manager", "--cloud_provider=aws"}, nil, nil, aws},
		{"env", []string{"env", "GOMAXPROCS=2", "kube-controller-manager", "--cloud-provider=aws"}, nil, nil, aws},
		{"env -i in a script", []string{"sh", "-c", "env -i HOME=/ /usr/local/bin/kube-controller-manager --cloud-provider=aws"}, nil, nil, aws},
		{"env -S", []string{"env", "-S", "kube-controller-manager --cloud-provider=aws"}, nil, nil, aws},
		{"tini", []string{"/sbin/tini", "--", "kube-controller-manager"}, []string{"--cloud-provider=aws"}, nil, aws},
		{"quoted", []string{"sh", "-c", `'kube-controller-manager' "--cloud-provider=aws"`}, nil, nil, aws},
		{"backslashes", []string{"sh", "-c", "kube-controller-manager \\\n  --cloud-provider=aws \\\n  --v=2"}, nil, nil, aws},
		{"after another command", []string{"sh", "-c", "set -e; mkdir -p /var/run && exec kube-controller-manager --cloud-provider=aws 2>&1 | tee /log"}, nil, nil, aws},
		{"in an if", []string{"sh", "-c", "if true; then kube-controller-manager --cloud-provider=aws; fi"}, nil, nil, aws},
		{"a script in a script", []string{"sh", "-c", `su root -c "kube-controller-manager --cloud-provider=aws"`}, nil, nil, aws},
		{"eval", []string{"bash", "-c", `eval "kube-controller-manager --cloud-provider=aws"`}, nil, nil, aws},
		{"the kubelet's $(VAR)", []string{"kube-controller-manager", "--cloud-provider=$(P)"}, nil, []corev1.EnvVar{env("P", "aws")}, aws},
		{"the kubelet's $$", []string{"sh", "-c", "kube-controller-manager --cloud-provider=external --v=$$LEVEL"}, nil, nil, ""},
		{"leader migration in a script, migrate", []string{"sh", "-c", "kube-controller-manager --cloud-provider=aws --enable-leader-migration"}, nil, nil, ""},
		{"a flag the shell fills in", []string{"sh", "-c", "kube-controller-manager --cloud-provider=$P"}, nil, nil, unread + `container kube-controller-manager: its command line has "--cloud-provider=$P"`},
		{"flags the shell fills in", []string{"sh", "-c", "kube-controller-manager $FLAGS"}, nil, nil, unread + `container kube-controller-manager: its command line has "$FLAGS"`},
		{`"$@"`, []string{"sh", "-c", `exec kube-controller-manager "$@"`, "sh", "--cloud-provider=aws"}, nil, nil, unread},
		{"a value from a Secret", []string{"kube-controller-manager", "--cloud-provider=$(P)"}, nil, []corev1.EnvVar{secret}, unread},
		{"a here-document", []string{"sh", "-c", "cat <<EOF >/f\nx\nEOF\nkube-controller-manager --cloud-provider=external"}, nil, nil, unread + "container kube-controller-manager: a script that names kube-controller-manager: a here-document"},
		{"an unterminated quote", []string{"sh", "-c", "kube-controller-manager '--cloud-provider=aws"}, nil, nil, unread},
		{"the program's name filled in", []string{"sh", "-c", "$KCM --cloud-provider=aws"}, nil, nil, unread + "no container's command and args show kube-controller-manager run"},
		{"a script file", []string{"sh", "/run.sh"}, nil, nil, unread + "no container's command and args show kube-controller-manager run"},
		{"a flag the shell fills in, of another flag", []string{"sh", "-c", "kube-controller-manager --cloud-provider=external --kubeconfig=$KC"}, nil, nil, ""},
		{"a glob in another flag", []string{"sh", "-c", "kube-controller-manager --cloud-provider=external --controllers=*,-ttl"}, nil, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			mode := renderer.ModeInstall
			if strings.HasSuffix(c.name, "migrate") {
				mode = renderer.ModeMigrate
			}
			got := holds(guardSnapshot("v1.26.15", kcmContainer(c.command, c.args, c.env...)), GuardInput{Mode: mode, CCMVersions: []string{"v1.26.14"}})
			switch {
			case c.want == "" && len(got) != 0:
				t.Errorf("%q: %q, want it to start", c.command, got)
			case c.want != "" && (len(got) == 0 || !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, c.want) })):
				t.Errorf("%q: %q, want a reason starting %q", c.command, got, c.want)
			}
		})
	}
}

// kcmCase is a controller manager as the property test writes it: what it
// runs, and a command line that says so, wrapped one of many ways.
type kcmCase struct {
	provider string // aws, external, ""
	lm       bool
	hidden   bool // a flag the guard is asked about is left to the shell
	pod      corev1.Pod
}

// genKCM writes a controller manager's pod at random.
func genKCM(r *rand.Rand) kcmCase {
	k := kcmCase{provider: []string{"aws", "external", ""}[r.IntN(3)], lm: r.IntN(2) == 0}
	var flags []string
	sep := func() string { return []string{"=", " "}[r.IntN(2)] }
	name := func(n string) string {
		if r.IntN(4) == 0 {
			return strings.ReplaceAll(n, "-", "_")
		}
		return n
	}
	noise := []string{"--v=2", "--kubeconfig=/etc/kubernetes/controller-manager.conf", "--leader-elect=true", "--controllers=*,bootstrapsigner", "--use-service-account-credentials"}
	for range r.IntN(3) {
		flags = append(flags, noise[r.IntN(len(noise))])
	}
	if k.provider != "" {
		v := k.provider
		if r.IntN(8) == 0 {
			v, k.hidden = "$PROVIDER", true
		}
		flags = append(flags, "--"+name("cloud-provider")+sep()+v)
	}
	if k.lm {
		flags = append(flags, []string{"--" + name("enable-leader-migration"), "--" + name("enable-leader-migration") + "=true"}[r.IntN(2)])
	}
	r.Shuffle(len(flags), func(i, j int) { flags[i], flags[j] = flags[j], flags[i] })
	var words []string
	for _, f := range flags {
		words = append(words, strings.Fields(f)...)
	}
	prog := []string{"kube-controller-manager", "/usr/local/bin/kube-controller-manager"}[r.IntN(2)]
	quote := func(w string) string {
		switch r.IntN(3) {
		case 0:
			return "'" + w + "'"
		case 1:
			return `"` + strings.ReplaceAll(w, "$", `$`) + `"`
		}
		return w
	}
	script := func() string {
		var b []string
		for _, w := range append([]string{prog}, words...) {
			if strings.Contains(w, "$") || strings.Contains(w, "*") {
				b = append(b, w) // left to the shell, or a glob
				continue
			}
			b = append(b, quote(w))
		}
		pre := []string{"", "exec ", "env GOGC=50 ", "set -e; ", "mkdir -p /run/x && exec "}[r.IntN(5)]
		return pre + strings.Join(b, []string{" ", " \\\n  "}[r.IntN(2)])
	}
	var command, args []string
	switch r.IntN(7) {
	case 0:
		command = append([]string{prog}, words...)
	case 1:
		n := r.IntN(len(words) + 1)
		command, args = append([]string{prog}, words[:n]...), words[n:]
	case 2:
		command = []string{"sh", "-c", script()}
	case 3:
		command, args = []string{"/bin/sh", "-c"}, []string{script()}
	case 4:
		command = []string{"bash", "-lc", script()}
	case 5:
		command = append([]string{"env", "-i", "HOME=/", prog}, words...)
	case 6:
		command, args = []string{"/sbin/tini", "--"}, append([]string{prog}, words...)
	}
	if shell := slices.Contains([]string{"sh", "/bin/sh", "bash"}, command[0]); k.hidden && !shell {
		// No shell: the controller manager reads "$PROVIDER" as the
		// provider's name, which is not aws.
		k.hidden, k.provider = false, "$PROVIDER"
	}
	k.pod = kcmContainer(command, args)
	if r.IntN(3) == 0 { // a sidecar beside it
		k.pod.Spec.Containers = append(k.pod.Spec.Containers, corev1.Container{Name: "logs", Image: "busybox", Command: []string{"sh", "-c", "tail -F /var/log/kcm.log"}})
	}
	return k
}

// TestHoldProperty: over controller managers written at random (their
// command wrapped in shells, env, tini, split across command and args,
// flags as one word or two, with - or _), API server and CCM versions
// readable or not, the guard says the CCM may start exactly when it read
// everything it needs and nothing it read is a reason to hold.
func TestHoldProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 1))
	kubes := []string{"v1.26.15", "v1.26.15+rke2r1", "1.26", "v1.27.1", "v1.25.3", "garbage", "", "v2.0.0", "v1.26.x", "v1.026.1"}
	for i := range 3000 {
		k := genKCM(r)
		kube := kubes[r.IntN(len(kubes))]
		mode := []renderer.Mode{renderer.ModeInstall, renderer.ModeMigrate}[r.IntN(2)]
		ccms := [][]string{{"v1.26.14"}, {"v1.26.14", "v1.25.16"}, {"v1.26.14", "v1.24.17"}, {"v1.27.1"}}[r.IntN(4)]
		got := Hold(guardSnapshot(kube, k.pod), GuardInput{Mode: mode, CCMVersions: ccms})

		km, versionOK := minorOf(kube)
		for _, c := range ccms {
			cm, _ := minorOf(c)
			versionOK = versionOK && cm <= km && cm >= km-1
		}
		inTreeOK := k.provider != "aws" || k.lm && mode == renderer.ModeMigrate
		safe := versionOK && inTreeOK && !k.hidden
		if (len(got) == 0) != safe {
			t.Fatalf("case %d: API server %q, CCMs %q, %s mode, controller manager (provider %q, leader migration %v, hidden %v) %q %q: %d reasons %+v, want safe=%v",
				i, kube, ccms, mode, k.provider, k.lm, k.hidden, k.pod.Spec.Containers[0].Command, k.pod.Spec.Containers[0].Args, len(got), got, safe)
		}
		for _, f := range got {
			if f.Severity != Error || f.Message == "" || f.Fix == "" || strings.Contains(f.Message+f.Fix, "\n") {
				t.Fatalf("case %d: a reason without its fix, or on two lines: %+v", i, f)
			}
		}
	}
}

// FuzzHold: whatever the API answers (the API server's version, a
// controller manager's command and args, the CCM's releases), the guard
// says the CCM may start only when it read the API server's version and
// each CCM's, they fit the skew policy, and it saw a controller manager
// run with flags it could read.
func FuzzHold(f *testing.F) {
	f.Add("v1.26.15", "kube-controller-manager\x00--cloud-provider=external", "", "v1.26.14", false)
	f.Add("v1.26.15", "sh\x00-c\x00kube-controller-manager --cloud-provider=aws", "", "v1.26.14", true)
	f.Add("garbage", "kube-controller-manager", "--cloud-provider=external", "v1.26.14", false)
	f.Add("v1.26.15", "/bin/sh\x00-c", "exec kube-controller-manager $FLAGS", "v1.26.14", false)
	f.Add("v1.26.15", "bash\x00-lc", "kube-controller-manager --cloud-provider \"aws\" --enable-leader-migration", "v1.26.14\x00v1.25.16", true)
	f.Add("v1.26.15", "env\x00-S", "kube-controller-manager --cloud_provider=external", "v1.27.0", false)
	f.Add("1.26", "sh\x00-c\x00cat <<E\nkube-controller-manager\nE", "", "v1.26.14", false)
	f.Fuzz(func(t *testing.T, kube, command, args, ccm string, migrate bool) {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, "\x00")
		}
		mode := renderer.ModeInstall
		if migrate {
			mode = renderer.ModeMigrate
		}
		s := guardSnapshot(kube, kcmContainer(split(command), split(args)))
		in := GuardInput{Mode: mode, CCMVersions: split(ccm)}
		got := Hold(s, in)
		for _, f := range got {
			if f.Severity != Error || f.Message == "" || f.Fix == "" {
				t.Fatalf("a reason without its fix: %+v", f)
			}
		}
		if len(got) > 0 {
			return
		}
		km, ok := minorOf(kube)
		if !ok || len(in.CCMVersions) == 0 {
			t.Fatalf("may start with API server %q and CCMs %q", kube, in.CCMVersions)
		}
		for _, c := range in.CCMVersions {
			if cm, ok := minorOf(c); !ok || cm > km || cm < km-1 {
				t.Fatalf("may start with API server %q and CCM %q", kube, c)
			}
		}
		kcms, unread := NewView(s).readControlPlane(programKCM, "cloud-provider", "enable-leader-migration")
		if len(kcms) == 0 || len(unread) > 0 {
			t.Fatalf("may start with controller managers %+v and unread %+v", kcms, unread)
		}
		for _, k := range kcms {
			if k.flags["cloud-provider"] == "aws" && (mode == renderer.ModeInstall || !IsTrue(k.flags["enable-leader-migration"])) {
				t.Fatalf("may start beside %+v", k)
			}
		}
	})
}

// FuzzShellCommands: the splitter takes any script without panicking, and
// what it returns are commands of words.
func FuzzShellCommands(f *testing.F) {
	for _, s := range []string{"kube-controller-manager --cloud-provider=aws", `a "b $c" 'd' \e; f && g | h`, "$(a (b)) ${c} `d`", "a <<E", "a 2>&1 >/f", "'", `"`, "$(", "#c\nx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cmds, err := shellCommands(s)
		if err != nil {
			return
		}
		for _, c := range cmds {
			if len(c) == 0 {
				t.Fatalf("%q: an empty command", s)
			}
			for _, w := range c {
				if w.dynamic > len(w.text) {
					t.Fatalf("%q: word %+v", s, w)
				}
			}
		}
	})
}
