package dist

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/yaml"
)

// ChartDir is the wrapper chart, in the repository.
var ChartDir = filepath.Join("charts", "aws-ccm-rancher")

// ChartDependencies are the packages (NAME-VERSION.tgz) of the
// dependencies a Chart.lock pins.
func ChartDependencies(lock []byte) ([]string, error) {
	var l struct {
		Dependencies []struct{ Name, Version string } `json:"dependencies"`
	}
	if err := yaml.Unmarshal(lock, &l); err != nil || len(l.Dependencies) == 0 {
		return nil, fmt.Errorf("no dependencies read (%v)", err)
	}
	var names []string
	for _, dep := range l.Dependencies {
		names = append(names, dep.Name+"-"+dep.Version+".tgz")
	}
	return names, nil
}

// chartRepo writes the wrapper chart's repository into charts/ of the
// output: the chart packaged by Helm 3 with its dependency (the upstream
// chart at the version Chart.lock pins: a package found in c.Charts, else
// downloaded by helm dependency build), signed with the release key when
// there is one, and index.yaml (relative URLs: the directory is served as
// it is), which carries Chart.yaml's catalog.cattle.io annotations that
// Rancher Apps reads.
func (c *Config) chartRepo() ([]string, error) {
	stage := filepath.Join(c.work, "chart", "aws-ccm-rancher")
	if err := os.CopyFS(stage, os.DirFS(c.path(ChartDir))); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(c.path(ChartDir, "Chart.lock"))
	if err != nil {
		return nil, fmt.Errorf("the wrapper chart's Chart.lock, which pins its dependency: %v", err)
	}
	deps, err := ChartDependencies(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(ChartDir, "Chart.lock"), err)
	}
	helm := helmEnv(c.work)
	for _, name := range deps {
		found := ""
		for _, d := range c.Charts {
			if p := filepath.Join(d, name); fileExists(p) {
				found = p
				break
			}
		}
		if found == "" {
			// No local copy: Helm downloads what Chart.lock pins.
			if _, err := c.exec("", helm, c.Helm3, "dependency", "build", stage); err != nil {
				return nil, fmt.Errorf("the wrapper chart's dependency %s is in none of %q and downloading it failed (set AWS_CCM_CHARTS to a directory holding it): %w", name, c.Charts, err)
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
	repo := filepath.Join(c.Out, "charts")
	if _, err := c.exec("", helm, c.Helm3, append([]string{"package", stage, "--destination", repo}, c.signArgs(false)...)...); err != nil {
		return nil, err
	}
	if _, err := c.exec("", helm, c.Helm3, "repo", "index", repo); err != nil {
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
