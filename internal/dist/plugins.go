package dist

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// PluginVersion is the Helm 4 plugin's version on a platform: the
// release's, without the v, with the platform as semver build metadata
// (linux.amd64). Helm names the tarball NAME-VERSION.tgz and signs that
// name, so each platform's needs a name of its own; build metadata leaves
// the version's precedence alone.
func PluginVersion(version, goos, goarch string) string {
	return strings.TrimPrefix(version, "v") + "+" + goos + "." + goarch
}

// helm4Command is the command line of plugin/aws-ccm/plugin.yaml that
// Helm4PluginYAML gives the platform's file name.
const helm4Command = "- command: ${HELM_PLUGIN_DIR}/aws-ccm-renderer"

// Helm4PluginYAML is plugin/aws-ccm/plugin.yaml for a platform: the
// version set to PluginVersion's and, on Windows, the command's .exe.
func Helm4PluginYAML(src []byte, version string, p Platform) ([]byte, error) {
	var out bytes.Buffer
	seen := 0
	for line := range strings.Lines(string(src)) {
		switch {
		case strings.HasPrefix(line, "version:"):
			line = "version: " + PluginVersion(version, p.OS, p.Arch) + "\n"
			seen++
		case strings.TrimSpace(line) == helm4Command:
			line = strings.TrimSuffix(line, "\n") + p.Exe("") + "\n"
			seen++
		}
		out.WriteString(line)
	}
	if seen != 2 {
		return nil, fmt.Errorf("plugin/aws-ccm/plugin.yaml: no version line or no command ${HELM_PLUGIN_DIR}/aws-ccm-renderer to set")
	}
	return out.Bytes(), nil
}

// Helm3PluginFiles are the Helm 3 plugin's files, at the repository's
// top: helm plugin install URL-OF-THE-REPOSITORY clones the repository
// and wants plugin.yaml there, and the release's plugin archive holds
// the same files at its top.
var Helm3PluginFiles = []string{"plugin.yaml", "install-binary.sh"}

// Helm3PluginYAML is the Helm 3 plugin's plugin.yaml with the release's
// version, without the v.
func Helm3PluginYAML(src []byte, version string) ([]byte, error) {
	var out bytes.Buffer
	set := false
	for line := range strings.Lines(string(src)) {
		if strings.HasPrefix(line, "version:") {
			line, set = "version: "+strings.TrimPrefix(version, "v")+"\n", true
		}
		out.WriteString(line)
	}
	if !set {
		return nil, fmt.Errorf("plugin.yaml: no version line to set")
	}
	return out.Bytes(), nil
}

// signArgs are the arguments that have helm package and helm plugin
// package sign with the release key; without one, plugin package is told
// not to (Helm 4 signs by default), and helm package needs nothing.
func (c *Config) signArgs(plugin bool) []string {
	switch {
	case c.SignKey != "":
		return []string{"--sign", "--key", c.SignKey, "--keyring", c.Keyring}
	case plugin:
		return []string{"--sign=false"}
	}
	return nil
}

// helm4Plugin has Helm 4 package the postrenderer/v1 plugin with the
// platform's renderer: plugin/aws-ccm/plugin.yaml (Helm4PluginYAML) and
// the program, dated at the epoch.
func (c *Config) helm4Plugin(p Platform, renderer string) ([]string, error) {
	src, err := os.ReadFile(c.path("plugin", "aws-ccm", "plugin.yaml"))
	if err != nil {
		return nil, err
	}
	yaml, err := Helm4PluginYAML(src, c.Version, p)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(c.work, "helm4-"+p.String(), "aws-ccm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "plugin.yaml"), yaml, 0o644); err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(renderer)
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, filepath.Base(renderer)), bin, 0o755); err != nil {
		return nil, err
	}
	if err := Stamp(dir, c.Epoch); err != nil {
		return nil, err
	}
	args := append([]string{"plugin", "package", dir, "--destination", c.Out}, c.signArgs(true)...)
	if _, err := c.exec("", helmEnv(c.work), c.Helm4, args...); err != nil {
		return nil, err
	}
	tgz := "aws-ccm-" + PluginVersion(c.Version, p.OS, p.Arch) + ".tgz"
	if c.SignKey != "" {
		return []string{tgz, tgz + ".prov"}, nil
	}
	return []string{tgz}, nil
}

// writeFile writes a file with exactly the mode given, whatever the umask.
func writeFile(path string, b []byte, mode os.FileMode) error {
	if err := os.WriteFile(path, b, mode); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

// helmEnv is this process's environment without the caller's Helm
// settings, Helm's homes in the work directory.
func helmEnv(work string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HELM_") {
			env = append(env, kv)
		}
	}
	home := filepath.Join(work, "helm-home")
	return append(env, "HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
}

// Helm3PluginArchive is the name of the Helm 3 plugin's archive:
// NAME-X.Y.Z.tar.gz, from which helm plugin install URL takes the
// directory it installs into (aws-ccm), as it does for every plugin.
func Helm3PluginArchive(version string) string {
	return "aws-ccm-" + strings.TrimPrefix(version, "v") + ".tar.gz"
}

// helm3Plugin packs the Helm 3 plugin, Helm3PluginFiles of the
// repository's top with the release's version (Helm3PluginYAML), into an
// archive with them at its top: what helm plugin install takes by its URL
// (Helm 3 looks for plugin.yaml at the top of what it unpacks), or
// unpacked into a directory.
func (c *Config) helm3Plugin() ([]string, error) {
	stage := filepath.Join(c.work, "helm3", "aws-ccm")
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return nil, err
	}
	for _, name := range Helm3PluginFiles {
		b, err := os.ReadFile(c.path(name))
		if err != nil {
			return nil, err
		}
		if name == "plugin.yaml" {
			if b, err = Helm3PluginYAML(b, c.Version); err != nil {
				return nil, err
			}
		}
		if err := writeFile(filepath.Join(stage, name), b, mode(name)); err != nil {
			return nil, err
		}
	}
	name := Helm3PluginArchive(c.Version)
	return []string{name}, WriteArchive(filepath.Join(c.Out, name), stage, Helm3PluginFiles, false, c.Epoch)
}
