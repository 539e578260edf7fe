package renderer

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func set(name, value string) Flag { return Flag{Name: name, Value: value} }
func remove(name string) Flag     { return Flag{Name: name, Remove: true} }

func TestArgs(t *testing.T) {
	container := func(args string) string {
		return ds("      containers:\n      - name: ccm\n        image: registry.k8s.io/provider-aws/cloud-controller-manager:v1.35.0\n" + args)
	}
	runFilterCases(t, []filterCase{
		{
			name: "merge by name: changed flags keep their place, new ones are appended",
			filter: Args{Workload: ccmContainer, Flags: []Flag{set("cloud-provider", "aws"), set("use-service-account-credentials", "true"),
				set("v", "4"), remove("enable-leader-migration")}},
			input: container("        args:\n        - --v\n        - \"2\"\n        - --enable-leader-migration=true\n        - --cloud-provider=aws\n        - --cluster-name=prod\n"),
			want:  container("        args:\n        - --v=4\n        - --cloud-provider=aws\n        - --cluster-name=prod\n        - --use-service-account-credentials=true\n"),
		},
		{
			name:   "later duplicates of a set flag go",
			filter: Args{Workload: ccmContainer, Flags: []Flag{set("v", "2")}},
			input:  container("        args: [--v=1, --x, --v=3]\n"),
			want:   container("        args: [--v=2, --x]\n"),
		},
		{
			name:   "only the CCM's containers are touched",
			filter: Args{Workload: ccmContainer, Flags: []Flag{set("cloud-provider", "aws")}},
			input:  ds("      containers:\n      - name: sidecar\n        image: busybox\n        args: [--cloud-provider, gce]\n      - name: ccm\n        image: example.com/ccm:1\n        args:\n        - --cloud-provider\n        - aws\n"),
			want:   ds("      containers:\n      - name: sidecar\n        image: busybox\n        args: [--cloud-provider, gce]\n      - name: ccm\n        image: example.com/ccm:1\n        args:\n        - --cloud-provider=aws\n"),
		},
		{
			name:   "no args yet",
			filter: Args{Workload: ccmContainer, Flags: []Flag{set("cloud-provider", "aws")}},
			input:  container(""),
			want:   container("        args:\n        - --cloud-provider=aws\n"),
		},
		{
			name: "flags in command after the CCM's executable and in args are one command line: each flag once",
			filter: Args{Workload: ccmContainer, Flags: []Flag{set("cloud-provider", "aws"), set("use-service-account-credentials", "true"),
				remove("enable-leader-migration"), remove("leader-migration-config")}},
			input: container("        command: [/bin/aws-cloud-controller-manager, --cloud-provider=aws, --enable-leader-migration=true, --v=2]\n" +
				"        args: [--cloud-provider=aws, --leader-migration-config, /etc/lm.yaml]\n"),
			want: container("        command: [/bin/aws-cloud-controller-manager, --cloud-provider=aws, --v=2]\n" +
				"        args: [--use-service-account-credentials=true]\n"),
		},
		{
			name:   "a command that is not the CCM's executable is left alone",
			filter: Args{Workload: ccmContainer, Flags: []Flag{set("v", "4")}},
			input:  container("        command: [/bin/sh, -c, exec ccm --v=2]\n        args: [--v=2]\n"),
			want:   container("        command: [/bin/sh, -c, exec ccm --v=2]\n        args: [--v=4]\n"),
		},
		{
			name:   "a removed flag goes from command too",
			filter: Args{Workload: ccmContainer, Flags: []Flag{remove("allocate-node-cidrs")}},
			input:  container("        command: [aws-cloud-controller-manager, --allocate-node-cidrs=true]\n"),
			want:   container("        command: [aws-cloud-controller-manager]\n"),
		},
		{
			name:   "list-valued flags merge by key",
			filter: Args{Workload: ccmContainer, Flags: []Flag{{Name: "feature-gates", Value: "ControllerManagerLeaderMigration=true", Entries: true}}},
			input:  container("        args: [\"--feature-gates=A=true,ControllerManagerLeaderMigration=false\"]\n"),
			want:   container("        args: ['--feature-gates=A=true,ControllerManagerLeaderMigration=true']\n"),
		},
		{
			name:   "removing the last entry removes the flag",
			filter: Args{Workload: ccmContainer, Flags: []Flag{{Name: "feature-gates", Value: "ControllerManagerLeaderMigration=true", Entries: true, Remove: true}}},
			input:  container("        args: [--v=2, --feature-gates=ControllerManagerLeaderMigration=true]\n"),
			want:   container("        args: [--v=2]\n"),
		},
		{
			name:    "args that are a map",
			filter:  Args{Workload: ccmContainer, Flags: []Flag{set("v", "2")}},
			input:   container("        args: {v: 2}\n"),
			wantErr: `DaemonSet kube-system/ccm: container "ccm": args is a map, not a list`,
		},
	})
}

// TestArgsUndo: the user's flags are remembered on the workload's metadata
// and undone by the next render, so rendering the output with other flags
// gives what rendering the original would; an edit made since is kept.
func TestArgsUndo(t *testing.T) {
	in := ds("      containers:\n      - name: ccm\n        args: [--v=2, --cloud-provider=aws, --x=1]\n")
	ours := []Flag{set("cloud-provider", "aws"), set("configure-cloud-routes", "false")}
	run := func(t *testing.T, text string, f Args) string {
		t.Helper()
		rn := yaml.MustParse(text)
		if _, err := f.Filter([]*yaml.RNode{rn}); err != nil {
			t.Fatal(err)
		}
		return rn.MustString()
	}
	direct := run(t, in, Args{Workload: ccmContainer, Flags: ours})
	withUser := run(t, in, Args{Workload: ccmContainer, Flags: ours, User: []Flag{set("v", "4"), remove("x")}})
	if !strings.Contains(withUser, ArgsAnnotation) || !strings.Contains(withUser, "args: [--v=4, --cloud-provider=aws, --configure-cloud-routes=false]") {
		t.Fatalf("user flags not applied and remembered:\n%s", withUser)
	}
	if strings.Contains(direct, ArgsAnnotation) {
		t.Fatalf("remembered with nothing to undo:\n%s", direct)
	}
	if back := run(t, withUser, Args{Workload: ccmContainer, Flags: ours}); back != direct {
		t.Errorf("rendering the output without the user's flags:\n%s\nwant what rendering the input gives:\n%s", back, direct)
	}
	other := run(t, withUser, Args{Workload: ccmContainer, Flags: ours, User: []Flag{set("v", "5")}})
	if want := run(t, in, Args{Workload: ccmContainer, Flags: ours, User: []Flag{set("v", "5")}}); other != want {
		t.Errorf("rendering the output with other user flags:\n%s\nwant:\n%s", other, want)
	}
	// An edit after the render: the command line is taken as it is now.
	edited := strings.Replace(withUser, "--v=4", "--v=9", 1)
	var warned []string
	got := run(t, edited, Args{Workload: ccmContainer, Flags: ours, Warn: func(err error) { warned = append(warned, err.Error()) }})
	if !strings.Contains(got, "--v=9") || strings.Contains(got, ArgsAnnotation) || len(warned) != 1 {
		t.Errorf("edited command line: warnings %q, got:\n%s", warned, got)
	}
}

func TestMergeArgs(t *testing.T) {
	got := MergeArgs([]string{"pos", "-a", "0", "--gone", "--b", "--c=3", "--gone=1", "--"}, []Flag{set("a", "1"), set("new", "x"), remove("gone")})
	want := []string{"pos", "-a=1", "--b", "--c=3", "--", "--new=x"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("MergeArgs = %q, want %q", got, want)
	}
}
