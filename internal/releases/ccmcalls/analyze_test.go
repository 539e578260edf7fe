package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAnalyze reads a CCM-shaped module: the requests built in code the
// program reaches count, whatever the SDK; those of functions nothing
// reaches, of methods only kube-apiserver called, of test doubles, of tests
// and of the aws/v2 provider do not.
func TestAnalyze(t *testing.T) {
	got, err := Analyze(filepath.Join("testdata", "ccm"), filepath.Join("testdata", "cloudprovider"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"ec2:DescribeInstances":                              "pkg/providers/v1/aws.go EnsureLoadBalancer",
		"ec2:DescribeRegions":                                "pkg/providers/v1/aws.go (package variables)",
		"elasticloadbalancing:DescribeTargetGroupAttributes": "pkg/providers/v1/aws.go attributes",
		"elasticloadbalancing:ModifyTargetGroupAttributes":   "pkg/providers/v1/aws.go attributes",
	}
	for act, site := range want {
		if !slices.Equal(got[act], []string{site}) {
			t.Errorf("%s: sites %q, want %q", act, got[act], site)
		}
	}
	for act := range got {
		if _, ok := want[act]; !ok {
			t.Errorf("%s (%q) counted", act, got[act])
		}
	}
}

// TestAnalyzeUnknownService: a service without an IAM prefix here fails the
// reading, naming it, rather than leaving its calls out.
func TestAnalyzeUnknownService(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "ccm"), dir)
	extra := "package v1\n\nimport \"github.com/aws/aws-sdk-go-v2/service/s3\"\n\nfunc (c *Cloud) A() { _ = &s3.GetObjectInput{} }\n"
	if err := os.WriteFile(filepath.Join(dir, "pkg", "providers", "v1", "s3.go"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Analyze(dir, filepath.Join("testdata", "cloudprovider"))
	if err == nil || !strings.Contains(err.Error(), "s3 (pkg/providers/v1/s3.go)") {
		t.Fatalf("got %v, want an error naming s3", err)
	}
}

// TestAnalyzeErrors: a source without go.mod, and a cloud-provider without
// its interfaces, are errors.
func TestAnalyzeErrors(t *testing.T) {
	if _, err := Analyze(t.TempDir(), filepath.Join("testdata", "cloudprovider")); err == nil {
		t.Error("a directory without go.mod: no error")
	}
	if _, err := Analyze(filepath.Join("testdata", "ccm"), t.TempDir()); err == nil {
		t.Error("a cloud-provider without cloud.go: no error")
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
