// Package images tests the container images make images builds
// (internal/images, docs/dev/images.md) with the clients that consume them:
// both pushed to a registry (go-containerregistry's, in-process on
// loopback) and pulled by digest, their configuration, platforms, labels
// and files read back, their linux/amd64 programs run from the images' own
// file systems as the image says (aws-ccm-renderer argocd generate under
// Argo CD's environment, aws-ccm-renderer fn on a ResourceList), and the
// KRM function run by the real kustomize from the example that pins it.
package images

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/images"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/manifest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

func TestMain(m *testing.M) {
	// kustomize runs a container function with docker: this binary is the
	// docker it finds (dockerStandIn).
	if filepath.Base(os.Args[0]) == "docker" {
		os.Exit(dockerStandIn(os.Args[1:]))
	}
	code := m.Run()
	if registryServer != nil {
		registryServer.Close()
	}
	os.Exit(code)
}

// published is an image pushed to the test's registry.
type published struct {
	spec   images.Image
	digest v1.Hash
	ref    name.Digest // in the test's registry, by digest
	index  v1.ImageIndex
}

var (
	publishOnce    sync.Once
	registryServer *httptest.Server
	publishedHost  string
	publishedOut   map[string]published
)

// publish pushes the images make images built to a registry on loopback,
// and pulls each back by digest, once for the package's tests.
func publish(t *testing.T) (host string, out map[string]published) {
	t.Helper()
	publishOnce.Do(func() {
		registryServer = httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		publishedHost = strings.TrimPrefix(registryServer.URL, "http://")
		publishedOut = push(t, publishedHost)
	})
	if publishedOut == nil {
		t.Fatal("pushing the images failed (in an earlier test)")
	}
	return publishedHost, publishedOut
}

func push(t *testing.T, host string) map[string]published {
	t.Helper()
	dir := testtools.Images(t)
	out := map[string]published{}
	for _, spec := range images.All(pluginYAML(t)) {
		built, err := images.ReadLayout(filepath.Join(dir, spec.Name))
		if err != nil {
			t.Fatal(err)
		}
		d, err := built.Digest()
		if err != nil {
			t.Fatal(err)
		}
		tag, err := name.NewTag(host+"/aws-ccm-renderer/"+spec.Name+":test", name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.WriteIndex(tag, built); err != nil {
			t.Fatalf("push %s: %v", tag, err)
		}
		ref, err := name.NewDigest(host+"/aws-ccm-renderer/"+spec.Name+"@"+d.String(), name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		pulled, err := remote.Index(ref)
		if err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		if got, err := pulled.Digest(); err != nil || got != d {
			t.Fatalf("pulled %s: digest %v, %v", ref, got, err)
		}
		out[spec.Name] = published{spec: spec, digest: d, ref: ref, index: pulled}
	}
	return out
}

func pluginYAML(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testtools.Root(), "examples", "argocd", "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// imageFile is a file of an image's file system.
type imageFile struct {
	mode     int64
	uid, gid int
	dir      bool
	content  []byte
}

func filesOf(t *testing.T, img v1.Image) map[string]imageFile {
	t.Helper()
	files := map[string]imageFile{}
	rc := mutate.Extract(img)
	defer rc.Close()
	testtools.ReadTar(t, rc, func(h *tar.Header, content []byte) {
		files["/"+strings.TrimSuffix(h.Name, "/")] = imageFile{mode: h.Mode, uid: h.Uid, gid: h.Gid, dir: h.Typeflag == tar.TypeDir, content: content}
	})
	return files
}

var ociKeys = []string{"title", "description", "version", "revision", "source", "url", "documentation", "licenses", "created"}

// TestImages: both images, pushed and pulled by digest, are an OCI image
// index of linux/amd64 and linux/arm64 images whose configuration (user,
// entrypoint, environment, labels), annotations and files are what
// internal/images says, with static programs of each platform; building
// them again from the same binaries gives the same digests; the examples
// pin them by digest.
func TestImages(t *testing.T) {
	_, pub := publish(t)
	for _, p := range pub {
		t.Run(p.spec.Name, func(t *testing.T) {
			im, err := p.index.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			if im.MediaType != types.OCIImageIndex {
				t.Errorf("media type %s, want an OCI image index", im.MediaType)
			}
			ann := im.Annotations
			for _, k := range ociKeys {
				if ann["org.opencontainers.image."+k] == "" {
					t.Errorf("no annotation org.opencontainers.image.%s: %v", k, ann)
				}
			}
			if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(ann["org.opencontainers.image.revision"]) ||
				ann["org.opencontainers.image.source"] != "https://github.com/aws-ccm-renderer/aws-ccm-renderer" ||
				ann["org.opencontainers.image.title"] != p.spec.Title {
				t.Errorf("annotations %v", ann)
			}
			created, err := time.Parse(time.RFC3339, ann["org.opencontainers.image.created"])
			if err != nil {
				t.Fatalf("created: %v", err)
			}
			var platforms []string
			for _, desc := range im.Manifests {
				plat := desc.Platform.OS + "/" + desc.Platform.Architecture
				platforms = append(platforms, plat)
				img, err := p.index.Image(desc.Digest)
				if err != nil {
					t.Fatal(err)
				}
				checkImage(t, p.spec, plat, img, ann, created)
			}
			if slices.Sort(platforms); !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
				t.Errorf("platforms %q", platforms)
			}

			// Built again from the same binaries and metadata: the same
			// digest.
			again, err := images.Build(p.spec, filepath.Join(testtools.Images(t), "bin"), images.Meta{
				Version: ann["org.opencontainers.image.version"], Revision: ann["org.opencontainers.image.revision"],
				Source: ann["org.opencontainers.image.source"], Licenses: ann["org.opencontainers.image.licenses"], Created: created})
			if err != nil {
				t.Fatal(err)
			}
			if d, err := again.Digest(); err != nil || d != p.digest {
				t.Errorf("built again: %v, %v; make images built %s", d, err, p.digest)
			}
		})
	}

	// Every example that uses an image pins it by digest, in the
	// repository the images are published to; make pin-images writes the
	// built digests there.
	examples := map[string]string{
		"aws-ccm-renderer-argocd-cmp": "examples/argocd/repo-server-patch.yaml",
		"aws-ccm-renderer-fn":         "examples/krm/container/aws-ccm.yaml",
		"aws-ccm-renderer-guard":      "internal/images/pinned.go",
	}
	mk, err := os.ReadFile(filepath.Join(testtools.Root(), "images.mk"))
	if err != nil {
		t.Fatal(err)
	}
	for image, file := range examples {
		b, err := os.ReadFile(filepath.Join(testtools.Root(), file))
		if err != nil {
			t.Fatal(err)
		}
		refs := images.Pinned(string(b))[image]
		if len(refs) != 1 || !strings.HasPrefix(refs[0], "ghcr.io/aws-ccm-renderer/"+image+"@sha256:") {
			t.Errorf("%s: references %q, want %s pinned by digest once", file, refs, image)
		}
		if !strings.Contains(string(mk), file) {
			t.Errorf("images.mk's IMAGE_EXAMPLES lacks %s: make pin-images would not pin it", file)
		}
		pinned := images.Pin(string(b), map[string]v1.Hash{image: pub[image].digest})
		if want := "ghcr.io/aws-ccm-renderer/" + image + "@" + pub[image].digest.String(); images.Pinned(pinned)[image][0] != want {
			t.Errorf("%s pinned to the build: %q, want %s", file, images.Pinned(pinned)[image], want)
		}
	}
}

func checkImage(t *testing.T, spec images.Image, plat string, img v1.Image, ann map[string]string, created time.Time) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS+"/"+cf.Architecture != plat || !cf.Created.Time.Equal(created) {
		t.Errorf("%s: config for %s/%s, created %s", plat, cf.OS, cf.Architecture, cf.Created)
	}
	c := cf.Config
	if c.User != spec.User || !slices.Equal(c.Entrypoint, spec.Entrypoint) || len(c.Cmd) != 0 || !slices.Equal(c.Env, spec.Env) || c.WorkingDir != spec.WorkingDir {
		t.Errorf("%s: user %q entrypoint %q cmd %q env %q dir %q", plat, c.User, c.Entrypoint, c.Cmd, c.Env, c.WorkingDir)
	}
	if !maps.Equal(c.Labels, ann) || !maps.Equal(m.Annotations, ann) {
		t.Errorf("%s: labels %v, annotations %v; want the index's %v", plat, c.Labels, m.Annotations, ann)
	}
	var size int64
	for _, l := range m.Layers {
		size += l.Size
		if l.MediaType != types.OCILayer {
			t.Errorf("%s: layer media type %s", plat, l.MediaType)
		}
	}
	t.Logf("%s %s: %d layers, %.1f MiB compressed", spec.Name, plat, len(m.Layers), float64(size)/(1<<20))
	files := filesOf(t, img)
	machine := map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}[plat]
	for _, layer := range spec.Layers {
		for _, f := range layer {
			got, ok := files[f.Path]
			if !ok {
				t.Errorf("%s: no %s", plat, f.Path)
				continue
			}
			if got.mode&0o7777 != f.Mode || got.uid != f.UID || got.gid != f.GID || got.dir != f.Dir {
				t.Errorf("%s: %s mode %o owner %d:%d, want %o %d:%d", plat, f.Path, got.mode, got.uid, got.gid, f.Mode, f.UID, f.GID)
			}
			if f.Program != "" {
				ef, err := elf.NewFile(bytes.NewReader(got.content))
				if err != nil {
					t.Fatalf("%s: %s: %v", plat, f.Path, err)
				}
				interp := slices.ContainsFunc(ef.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
				if ef.Machine != machine || interp {
					t.Errorf("%s: %s is for %s, dynamically linked %v", plat, f.Path, ef.Machine, interp)
				}
			} else if !f.Dir && !bytes.Equal(got.content, f.Content) {
				t.Errorf("%s: %s differs from what it should hold", plat, f.Path)
			}
		}
	}
	if spec.Name == images.ArgoCDCMP(nil).Name && !bytes.Equal(files[images.PluginConfigPath].content, pluginYAML(t)) {
		t.Errorf("%s: %s is not examples/argocd/plugin.yaml", plat, images.PluginConfigPath)
	}
}

// hostImage is the image of this machine's platform in an index.
func hostImage(t *testing.T, idx v1.ImageIndex) v1.Image {
	t.Helper()
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if d.Platform.OS == "linux" && d.Platform.Architecture == runtime.GOARCH {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("no linux/%s image", runtime.GOARCH)
	return nil
}

// unpack unpacks an image into a read-only root file system.
func unpack(t *testing.T, img v1.Image) string {
	t.Helper()
	root := t.TempDir()
	t.Cleanup(func() { writable(root) })
	if err := rootFS(img, root); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestArgoCDImageGenerate runs the sidecar image's generate the way
// argocd-cmp-server does in it: the command of the plugin.yaml baked into
// the image, found in the image's PATH, as its user, with its environment
// plus what the repo server sends, in the Application's source directory
// under /tmp (where the CMP server unpacks it), the rest of the root file
// system read-only, without network.
func TestArgoCDImageGenerate(t *testing.T) {
	_, pub := publish(t)
	p := pub[images.ArgoCDCMP(nil).Name]
	img := hostImage(t, p.index)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	root := unpack(t, img)
	var plugin struct {
		Spec struct {
			Generate struct {
				Command []string `yaml:"command"`
				Args    []string `yaml:"args"`
			} `yaml:"generate"`
		} `yaml:"spec"`
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(images.PluginConfigPath)))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &plugin); err != nil {
		t.Fatal(err)
	}
	argv := append(slices.Clone(plugin.Spec.Generate.Command), plugin.Spec.Generate.Args...)

	chart, err := os.ReadFile(testtools.UpstreamChart(t, testtools.LatestChartVersion))
	if err != nil {
		t.Fatal(err)
	}
	kube, ok := releases.DefaultImageTag(testtools.LatestChartVersion)
	if !ok {
		t.Fatalf("no default image tag for chart %s", testtools.LatestChartVersion)
	}
	generate := func(t *testing.T, params string, extra ...string) (stdout, stderr string, err error) {
		t.Helper()
		// The source directory, as the CMP server unpacks it.
		src, err := os.MkdirTemp(filepath.Join(root, "tmp"), "_cmp_server")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(src, 0o777); err != nil {
			t.Fatal(err)
		}
		testtools.WriteFile(t, filepath.Join(src, "upstream", "ccm.tgz"), chart)
		env := append(slices.Clone(cf.Config.Env),
			"ARGOCD_APP_NAME=aws-ccm", "ARGOCD_APP_NAMESPACE=kube-system",
			"ARGOCD_APP_SOURCE_PATH=clusters/prod/aws-ccm", "ARGOCD_APP_REVISION=0123456789abcdef0123456789abcdef01234567",
			"KUBE_VERSION="+kube, "KUBE_API_VERSIONS=v1,apps/v1,rbac.authorization.k8s.io/v1",
			"ARGOCD_APP_PARAMETERS="+params)
		env = append(env, extra...)
		var o, e strings.Builder
		err = container{root: root, user: cf.Config.User, env: env, dir: "/tmp/" + filepath.Base(src), argv: argv, out: &o, err: &e}.run()
		return o.String(), e.String(), err
	}

	out, errOut, err := generate(t, `[{"name":"chart","string":"upstream/ccm.tgz"},{"name":"distro","string":"rke2"},{"name":"set-arg","array":["cluster-name=prod"]}]`)
	if err != nil {
		t.Fatalf("generate in the image (%s): %v\n%s", isolation, err, errOut)
	}
	t.Logf("ran %q in the image's root file system as %s (%s)", argv, cf.Config.User, isolation)
	objs, err := manifest.Split([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	testtools.CheckMeaning(t, objs, testtools.Fixtures(t), distros.RKE2, renderer.ModeInstall)
	if !strings.Contains(out, "--cluster-name=prod") || errOut != "" {
		t.Errorf("the parameters did not reach the renderer, or it said %q", errOut)
	}

	// A chart package served over TLS on the host's loopback, which the
	// container's network namespace does not reach.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(chart) }))
	defer srv.Close()
	if resp, err := srv.Client().Get(srv.URL + "/ccm.tgz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the chart server: %v", err)
	}
	plain := "http://" + strings.TrimPrefix(srv.URL, "https://")
	for name, c := range map[string]struct{ params, want string }{
		"a values file outside": {`[{"name":"chart","string":"upstream/ccm.tgz"},{"name":"values-files","array":["/etc/passwd"]}]`,
			"values-files: /etc/passwd is not a path in the Application's source directory"},
		// No network in the container: the registry on the host's
		// loopback cannot be reached from the container's.
		"a chart from the network": {`[{"name":"chart","string":"` + srv.URL + `/ccm.tgz"}]`, "network is unreachable"},
		// Refused before any connection is tried.
		"a chart over plain http": {`[{"name":"chart","string":"` + plain + `/ccm.tgz"}]`, "is a plain http:// URL"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, err := generate(t, c.params)
			if err == nil || out != "" || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %v, %d bytes out, stderr %q; want one line saying %q", err, len(out), errOut, c.want)
			}
		})
	}
	// The root file system is read-only: Helm's repository cache is under
	// /tmp (HELM_CACHE_HOME), where it can be made, and the chart from the
	// repository then fails for the network alone; anywhere else it cannot.
	out, errOut, err = generate(t, `[]`)
	if err == nil || out != "" || !strings.Contains(errOut, upstream.ChartRepo) || strings.Contains(errOut, "cache") {
		t.Errorf("a chart from the repository: exit %v, %d bytes out, stderr %q; want the repository unreachable", err, len(out), errOut)
	}
	out, errOut, err = generate(t, `[]`, "HELM_CACHE_HOME=/home/argocd/cache")
	if err == nil || out != "" || !strings.Contains(errOut, "mkdir /home/argocd/cache: permission denied") {
		t.Errorf("a cache outside /tmp: exit %v, %d bytes out, stderr %q; want the read-only root file system to refuse it", err, len(out), errOut)
	}
}

// resourceList wraps objects in a ResourceList with a functionConfig.
func resourceList(t *testing.T, objects []byte, functionConfig string) []byte {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(objects), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	fc, err := yaml.Parse(functionConfig)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := kio.ByteWriter{Writer: &b, WrappingAPIVersion: kio.ResourceListAPIVersion, WrappingKind: kio.ResourceListKind, FunctionConfig: fc}
	if err := w.Write(nodes); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// itemsOf are the items of a ResourceList, as a YAML stream.
func itemsOf(t *testing.T, list []byte) []manifest.Object {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(list), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := (kio.ByteWriter{Writer: &b}).Write(nodes); err != nil {
		t.Fatal(err)
	}
	objs, err := manifest.Split(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

const rendererConfig = "apiVersion: aws-ccm-renderer.io/v1alpha1\nkind: RendererConfig\nmetadata:\n  name: aws-ccm\n"

// TestKRMImageFn runs the KRM function image's entrypoint on a ResourceList
// as a container function runs (its user, its environment, stdin to
// stdout, no network, a read-only root file system): the chart's objects
// patched as the functionConfig says; a bad functionConfig fails with a
// result and one line.
func TestKRMImageFn(t *testing.T) {
	_, pub := publish(t)
	img := hostImage(t, pub[images.KRMFunction().Name].index)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	root := unpack(t, img)
	plain := testtools.HelmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), nil)
	fn := func(fc string) (string, string, error) {
		var o, e strings.Builder
		err := container{root: root, user: cf.Config.User, env: cf.Config.Env, dir: cf.Config.WorkingDir, argv: cf.Config.Entrypoint,
			in: bytes.NewReader(resourceList(t, plain, fc)), out: &o, err: &e}.run()
		return o.String(), e.String(), err
	}
	out, errOut, err := fn(rendererConfig + "distro: k3s\n")
	if err != nil {
		t.Fatalf("fn in the image (%s): %v\n%s", isolation, err, errOut)
	}
	objs := itemsOf(t, []byte(out))
	nodes := testtools.Fixtures(t)
	testtools.CheckMeaning(t, objs, nodes, distros.K3s, renderer.ModeInstall)
	testtools.SameAsRenderer(t, objs, testtools.PostRendered(t, plain, distros.K3s, renderer.ModeInstall), nodes)

	out, errOut, err = fn(rendererConfig + "distro: rke3\n")
	if err == nil || !strings.Contains(errOut, `distro "rke3" is unknown`) || strings.Count(errOut, "\n") != 1 || !strings.Contains(out, "results:") {
		t.Errorf("a bad distro: exit %v, stderr %q, stdout %s", err, errOut, out)
	}
}

// TestKRMImageWithKustomize builds examples/krm/container with the real
// kustomize: the function's image as the example pins it, pulled by digest
// from the registry (docker's registry mirror, here the test's registry in
// front of ghcr.io), run by the docker kustomize execs, which here is
// dockerStandIn: it runs the image's entrypoint as run above, with the
// arguments kustomize gives (user, network, environment).
func TestKRMImageWithKustomize(t *testing.T) {
	host, pub := publish(t)
	p := pub[images.KRMFunction().Name]
	src := filepath.Join(testtools.Root(), "examples", "krm", "container")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	// The example, pinned to this build (make pin-images).
	fcPath := filepath.Join(dir, "aws-ccm.yaml")
	b, err := os.ReadFile(fcPath)
	if err != nil {
		t.Fatal(err)
	}
	pinned := images.Pin(string(b), map[string]v1.Hash{p.spec.Name: p.digest})
	testtools.WriteFile(t, fcPath, []byte(pinned))
	plain := testtools.HelmTemplate(t, testtools.UpstreamChart(t, testtools.LatestChartVersion), nil)
	testtools.WriteFile(t, filepath.Join(dir, "ccm.yaml"), plain)

	bin := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "docker")); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "docker.log")
	env := []string{"PATH=" + bin, "HOME=" + t.TempDir(),
		"AWS_CCM_DOCKER_MIRROR=ghcr.io/aws-ccm-renderer=" + host + "/aws-ccm-renderer", "AWS_CCM_DOCKER_LOG=" + logFile}
	out, errOut, err := testtools.Run(t, env, testtools.Kustomize(t), "build", "--enable-alpha-plugins", dir)
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, errOut)
	}
	objs, err := manifest.Split(out)
	if err != nil {
		t.Fatal(err)
	}
	nodes := testtools.Fixtures(t)
	testtools.CheckMeaning(t, objs, nodes, distros.RKE2, renderer.ModeInstall)
	testtools.SameAsRenderer(t, objs, testtools.PostRendered(t, plain, distros.RKE2, renderer.ModeInstall), nodes)

	var runs []standInRun
	lb, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("docker was not run: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(lb)), "\n") {
		var r standInRun
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	want := "ghcr.io/aws-ccm-renderer/" + p.spec.Name + "@" + p.digest.String()
	if len(runs) != 1 || runs[0].Image != want || runs[0].Network != "none" || runs[0].User != "nobody" || runs[0].UID != images.NobodyUID {
		t.Errorf("docker runs %+v: want one of %s, --network none, --user nobody (uid %d in the image)", runs, want, images.NobodyUID)
	}
	t.Logf("kustomize ran %q as %s", runs[0].Args, runs[0].Isolation)
}

// standInRun is what dockerStandIn logs of a run.
type standInRun struct {
	Args             []string
	Image            string
	Network, User    string
	UID              int
	Isolation, Error string
}

// dockerStandIn is `docker run` as kustomize's container functions use it
// (kyaml fn/runtime/container: run --rm -i -a STDIN -a STDOUT -a STDERR
// --network NET --user USER --security-opt=no-new-privileges [-e K=V]...
// IMAGE): it pulls IMAGE (through $AWS_CCM_DOCKER_MIRROR, PREFIX=MIRROR, as
// a registry mirror), unpacks the image of this platform, and runs its
// entrypoint in it as container.run does, as USER (a name looked up in the
// image's /etc/passwd, as docker does), with the image's environment and
// the -e ones, stdin to stdout. Only --network none is supported. It logs
// the run as JSON to $AWS_CCM_DOCKER_LOG.
func dockerStandIn(args []string) int {
	r := standInRun{Args: args}
	code := func() int {
		if len(args) == 0 || args[0] != "run" {
			r.Error = "only docker run is supported"
			return 125
		}
		var env []string
		for i := 1; i < len(args); i++ {
			a := args[i]
			next := func() string {
				i++
				if i < len(args) {
					return args[i]
				}
				return ""
			}
			switch {
			case a == "--network":
				r.Network = next()
			case a == "--user":
				r.User = next()
			case a == "-e" || a == "--env":
				env = append(env, next())
			case a == "-a" || a == "--mount":
				if a == "--mount" {
					r.Error = "--mount is not supported"
					return 125
				}
				next()
			case a == "--rm" || a == "-i" || a == "--security-opt=no-new-privileges":
			case strings.HasPrefix(a, "-"):
				r.Error = "unsupported flag " + a
				return 125
			default:
				r.Image = a
				if i != len(args)-1 {
					r.Error = "arguments after the image are not supported"
					return 125
				}
			}
		}
		if r.Network != "none" {
			r.Error = "only --network none is supported"
			return 125
		}
		pull := r.Image
		if prefix, mirror, ok := strings.Cut(os.Getenv("AWS_CCM_DOCKER_MIRROR"), "="); ok && strings.HasPrefix(pull, prefix+"/") {
			pull = mirror + strings.TrimPrefix(pull, prefix)
		}
		ref, err := name.ParseReference(pull, name.Insecure)
		if err != nil {
			r.Error = err.Error()
			return 125
		}
		img, err := remote.Image(ref, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH}))
		if err != nil {
			r.Error = err.Error()
			return 125
		}
		cf, err := img.ConfigFile()
		if err != nil {
			r.Error = err.Error()
			return 125
		}
		root, err := os.MkdirTemp("", "docker-standin")
		if err != nil {
			r.Error = err.Error()
			return 125
		}
		defer func() { writable(root); os.RemoveAll(root) }()
		if err := rootFS(img, root); err != nil {
			r.Error = err.Error()
			return 125
		}
		user := r.User
		if user == "" {
			user = cf.Config.User
		}
		if r.UID, err = uidOf(root, user); err != nil {
			r.Error = err.Error()
			return 125
		}
		err = container{root: root, user: fmt.Sprint(r.UID), env: append(slices.Clone(cf.Config.Env), env...), dir: cmpOr(cf.Config.WorkingDir, "/"),
			argv: append(slices.Clone(cf.Config.Entrypoint), cf.Config.Cmd...), in: os.Stdin, out: os.Stdout, err: os.Stderr}.run()
		r.Isolation = isolation
		if err != nil {
			r.Error = err.Error()
			return 1
		}
		return 0
	}()
	if f := os.Getenv("AWS_CCM_DOCKER_LOG"); f != "" {
		if b, err := json.Marshal(r); err == nil {
			if lf, err := os.OpenFile(f, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(lf, string(b))
				lf.Close()
			}
		}
	}
	if r.Error != "" && code == 125 {
		fmt.Fprintln(os.Stderr, "docker (test stand-in): "+r.Error)
	}
	return code
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// uidOf is a user's UID, numeric or a name in the image's /etc/passwd.
func uidOf(root, user string) (int, error) {
	if uid, _, err := ids(user); err == nil {
		return uid, nil
	}
	b, err := os.ReadFile(filepath.Join(root, "etc", "passwd"))
	if err != nil {
		return 0, fmt.Errorf("--user %s: %w", user, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, ":")
		if len(f) > 2 && f[0] == user {
			uid, _, err := ids(f[2])
			return uid, err
		}
	}
	return 0, fmt.Errorf("--user %s: no such user in the image's /etc/passwd", user)
}

// TestGuardImage runs the guard's image as an init container would: its
// entrypoint (the renderer's GuardCommand), as its user, in its root file
// system. The lean program hands guard over to aws-ccm-renderer-helm
// beside it: --help prints the guard's help; without a cluster to read
// (no service account, no kubeconfig) it exits 2 saying so, nothing on
// stdout (where the Kubernetes client would try localhost:8080).
func TestGuardImage(t *testing.T) {
	_, pub := publish(t)
	img := hostImage(t, pub[images.Guard().Name].index)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cf.Config.Entrypoint, renderer.GuardCommand) || cf.Config.User != fmt.Sprintf("%d:%d", renderer.GuardUID, renderer.GuardUID) {
		t.Errorf("entrypoint %q user %q; want the guard's %q as %d", cf.Config.Entrypoint, cf.Config.User, renderer.GuardCommand, renderer.GuardUID)
	}
	root := unpack(t, img)
	run := func(args ...string) (string, string, error) {
		var o, e strings.Builder
		err := container{root: root, user: cf.Config.User, env: cf.Config.Env, dir: cf.Config.WorkingDir,
			argv: append(slices.Clone(cf.Config.Entrypoint), args...), out: &o, err: &e}.run()
		return o.String(), e.String(), err
	}
	out, errOut, err := run("--help")
	if err != nil || !strings.Contains(out, "guard holds the AWS CCM back while starting it would do harm") {
		t.Errorf("guard --help in the image (%s): %v\nstdout %q\nstderr %q", isolation, err, out, errOut)
	}
	out, errOut, err = run("--mode=install", "--ccm-version=auto", "--once")
	if code := testtools.ExitCode(err); code != 2 || out != "" || !strings.Contains(errOut, "POD_NAME and POD_NAMESPACE") {
		t.Errorf("guard --ccm-version=auto outside a pod: exit %d, stdout %q, stderr %q; want 2 and the pod's variables named", code, out, errOut)
	}
	out, errOut, err = run("--mode=install", "--ccm-version=v1.37.1", "--once")
	if code := testtools.ExitCode(err); code != 2 || out != "" || !strings.Contains(errOut, "guard needs a cluster, and no kubeconfig names one") {
		t.Errorf("guard without a cluster: exit %d, stdout %q, stderr %q; want 2 and why", code, out, errOut)
	}
	t.Logf("ran %q in the guard's image as %s (%s)", cf.Config.Entrypoint, cf.Config.User, isolation)
}
