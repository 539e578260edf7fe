package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/yaml"
)

// ChartDir is the wrapper chart.
var ChartDir = filepath.Join("charts", "aws-ccm-rancher")

// chartRepo writes the wrapper chart's repository into charts/ of the
// output: the chart packaged by Helm 3 with its dependency (the upstream
// chart at the version Chart.lock pins: a package found in c.charts, else
// downloaded by helm dependency build), signed with the release key when
// there is one, and index.yaml (relative URLs: the directory is served as
// it is), which carries Chart.yaml's catalog.cattle.io annotations that
// Rancher Apps reads.
func (c *config) chartRepo() ([]string, error) {
	stage := filepath.Join(c.work, "chart", "aws-ccm-rancher")
	src := os.DirFS(ChartDir)
	if err := os.CopyFS(stage, src); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(ChartDir, "Chart.lock"))
	if err != nil {
		return nil, fmt.Errorf("the wrapper chart's Chart.lock, which pins its dependency: %v", err)
	}
	var lock struct {
		Dependencies []struct{ Name, Version string } `json:"dependencies"`
	}
	if err := yaml.Unmarshal(b, &lock); err != nil || len(lock.Dependencies) == 0 {
		return nil, fmt.Errorf("%s: no dependencies read (%v)", filepath.Join(ChartDir, "Chart.lock"), err)
	}
	helm := helmEnv(c.work)
	for _, dep := range lock.Dependencies {
		name := dep.Name + "-" + dep.Version + ".tgz"
		found := ""
		for _, d := range c.charts {
			if p := filepath.Join(d, name); fileExists(p) {
				found = p
				break
			}
		}
		if found == "" {
			// No local copy: Helm downloads what Chart.lock pins.
			if _, err := command("", helm, c.helm3, "dependency", "build", stage); err != nil {
				return nil, fmt.Errorf("the wrapper chart's dependency %s is in none of %q and downloading it failed (set AWS_CCM_CHARTS to a directory holding it): %w", name, c.charts, err)
			}
			break
		}
		b, err := os.ReadFile(found)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Join(stage, "charts"), 0o755); err != nil {
			return nil, err
		}
		if err := writeFile(filepath.Join(stage, "charts", name), b, 0o644); err != nil {
			return nil, err
		}
	}
	repo := filepath.Join(c.out, "charts")
	args := []string{"package", stage, "--destination", repo}
	if c.signKey != "" {
		args = append(args, "--sign", "--key", c.signKey, "--keyring", c.keyring)
	}
	if _, err := command("", helm, c.helm3, args...); err != nil {
		return nil, err
	}
	if _, err := command("", helm, c.helm3, "repo", "index", repo); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(repo)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		files = append(files, filepath.ToSlash(filepath.Join("charts", e.Name())))
	}
	slices.Sort(files)
	return files, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
