// Package images builds the project's container images without a
// container engine, with go-containerregistry: the Argo CD config
// management plugin's sidecar and the KRM function, each a multi-platform
// OCI image index of static binaries on an empty base, written as an OCI
// layout and pushed to a registry. A build is reproducible: every
// timestamp is Meta.Created, every file's owner and mode is fixed, and the
// layers are written in path order, so the same binaries and metadata give
// the same digests (docs/dev/images.md).
package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Platforms are the platforms every image is built for.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// PlatformDir is the directory of a platform's binaries under the binaries
// directory: linux_amd64, linux_arm64.
// distributions names the distributions in the images' descriptions.
var distributions = distros.Alternatives(distros.DisplayNames(distros.Named(distros.Records())), "and")

func PlatformDir(p v1.Platform) string { return p.OS + "_" + p.Architecture }

// File is a file or directory of an image's file system.
type File struct {
	Path     string // absolute, in the image
	Mode     int64  // permission bits, with the sticky bit when wanted
	UID, GID int
	Dir      bool
	Content  []byte
	// Program names a binary of the binaries directory, taken for the
	// image's platform instead of Content.
	Program string
}

// Image is what an image holds and how it runs.
type Image struct {
	Name        string // the repository's last part, and the layout's directory
	Title       string
	Description string
	// Layers are the image's files, one layer per entry, base first.
	Layers     [][]File
	Entrypoint []string
	User       string
	Env        []string
	WorkingDir string
}

// Meta is what the labels and annotations say about a build.
type Meta struct {
	Version, Revision string
	Source            string // the repository's URL
	Licenses          string // an SPDX expression
	Created           time.Time
}

// The programs' directory in the images.
const ProgramDir = "/usr/local/bin"

// Users of the images: Argo CD's sidecar runs as 999 (Argo CD's docs ask
// for it), the KRM function as nobody (kustomize runs it as nobody).
const (
	ArgoCDUID = 999
	NobodyUID = 65534
)

// PluginConfigPath is where argocd-cmp-server reads its plugin's
// configuration.
const PluginConfigPath = "/home/argocd/cmp-server/config/plugin.yaml"

// CMPServer is argocd-cmp-server as Argo CD's repo server shares it with
// its sidecars (the var-files volume): the sidecar's entrypoint.
const CMPServer = "/var/run/argocd/argocd-cmp-server"

const passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
	"argocd:x:999:999:argocd:/home/argocd:/sbin/nologin\n" +
	"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"

const group = "root:x:0:\nargocd:x:999:\nnobody:x:65534:\n"

// base are the files every image has: the users, and a /tmp anyone may
// write to (the one writable place with a read-only root file system,
// usually a volume mounted over it).
func base() []File {
	return []File{
		{Path: "/etc/passwd", Mode: 0o644, Content: []byte(passwd)},
		{Path: "/etc/group", Mode: 0o644, Content: []byte(group)},
		{Path: "/tmp", Mode: 0o1777, Dir: true},
	}
}

func programs(names ...string) []File {
	var fs []File
	for _, n := range names {
		fs = append(fs, File{Path: path.Join(ProgramDir, n), Mode: 0o755, Program: n})
	}
	return fs
}

// ArgoCDCMP is the Argo CD config management plugin's sidecar: both
// programs (generate runs in aws-ccm-renderer-helm), the plugin's
// configuration where argocd-cmp-server reads it, HOME and Helm's
// directories under /tmp, user 999.
func ArgoCDCMP(pluginYAML []byte) Image {
	home := func(p string) File { return File{Path: p, Mode: 0o755, UID: ArgoCDUID, GID: ArgoCDUID, Dir: true} }
	return Image{
		Name:        "aws-ccm-renderer-argocd-cmp",
		Title:       "aws-ccm-renderer Argo CD plugin",
		Description: "Argo CD config management plugin sidecar: renders the aws-cloud-controller-manager chart for " + distributions + " (aws-ccm-renderer argocd generate)",
		Layers: [][]File{
			append(base(), home("/home/argocd"), home("/home/argocd/cmp-server"), home("/home/argocd/cmp-server/plugins"),
				File{Path: "/home/argocd/cmp-server/config", Mode: 0o755, Dir: true},
				File{Path: "/var/run/argocd", Mode: 0o755, Dir: true}),
			programs("aws-ccm-renderer", "aws-ccm-renderer-helm"),
			{{Path: PluginConfigPath, Mode: 0o644, Content: pluginYAML}},
		},
		Entrypoint: []string{CMPServer},
		User:       fmt.Sprintf("%d:%d", ArgoCDUID, ArgoCDUID),
		Env: []string{"PATH=" + ProgramDir, "HOME=/tmp",
			"HELM_CACHE_HOME=/tmp/helm/cache", "HELM_CONFIG_HOME=/tmp/helm/config", "HELM_DATA_HOME=/tmp/helm/data"},
		WorkingDir: "/home/argocd",
	}
}

// KRMFunction is the KRM function for kustomize's container functions:
// aws-ccm-renderer fn as the entrypoint, user nobody.
func KRMFunction() Image {
	return Image{
		Name:        "aws-ccm-renderer-fn",
		Title:       "aws-ccm-renderer KRM function",
		Description: "KRM function (aws-ccm-renderer fn): patches the aws-cloud-controller-manager chart's output for " + distributions,
		Layers:      [][]File{base(), programs("aws-ccm-renderer")},
		Entrypoint:  []string{path.Join(ProgramDir, "aws-ccm-renderer"), "fn"},
		User:        fmt.Sprintf("%d:%d", NobodyUID, NobodyUID),
		Env:         []string{"PATH=" + ProgramDir},
		WorkingDir:  "/",
	}
}

// Guard is the guard's image (aws-ccm-renderer guard, an init container of
// the CCM's pod, renderer.Guard): both programs (guard runs in
// aws-ccm-renderer-helm), the guard as the entrypoint, its user.
func Guard() Image {
	return Image{
		Name:        "aws-ccm-renderer-guard",
		Title:       "aws-ccm-renderer guard",
		Description: "Init container of the AWS CCM's pod: holds the CCM back while the in-tree provider, a forbidden version skew or the distribution's own cloud controller would make it a second cloud controller (aws-ccm-renderer guard)",
		Layers:      [][]File{base(), programs("aws-ccm-renderer", "aws-ccm-renderer-helm")},
		Entrypoint:  slices.Clone(renderer.GuardCommand),
		User:        fmt.Sprintf("%d:%d", renderer.GuardUID, renderer.GuardUID),
		Env:         []string{"PATH=" + ProgramDir},
		WorkingDir:  "/",
	}
}

// All are the project's images, the Argo CD sidecar's with the plugin's
// configuration given.
func All(pluginYAML []byte) []Image {
	return []Image{ArgoCDCMP(pluginYAML), KRMFunction(), Guard()}
}

// Annotations are the org.opencontainers.image.* annotations of an image,
// which are also its configuration's labels.
func (img Image) Annotations(m Meta) map[string]string {
	a := map[string]string{
		"org.opencontainers.image.title":       img.Title,
		"org.opencontainers.image.description": img.Description,
		"org.opencontainers.image.version":     m.Version,
		"org.opencontainers.image.revision":    m.Revision,
		"org.opencontainers.image.source":      m.Source,
		"org.opencontainers.image.url":         m.Source,
		"org.opencontainers.image.licenses":    m.Licenses,
		"org.opencontainers.image.created":     m.Created.UTC().Format(time.RFC3339),
	}
	if m.Source != "" {
		a["org.opencontainers.image.documentation"] = m.Source + "/blob/" + cmpOr(m.Revision, "main") + "/docs/images.md"
	}
	for k, v := range a {
		if v == "" {
			delete(a, k)
		}
	}
	return a
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Build builds the image's index: one image per platform, its binaries
// from bins/<os>_<arch>/.
func Build(img Image, bins string, m Meta) (v1.ImageIndex, error) {
	m.Created = m.Created.UTC().Truncate(time.Second)
	ann := img.Annotations(m)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range Platforms {
		im, err := buildPlatform(img, filepath.Join(bins, PlatformDir(p)), p, m, ann)
		if err != nil {
			return nil, fmt.Errorf("%s for %s/%s: %w", img.Name, p.OS, p.Architecture, err)
		}
		pp := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: im, Descriptor: v1.Descriptor{Platform: &pp}})
	}
	return mutate.Annotations(idx, ann).(v1.ImageIndex), nil
}

func buildPlatform(img Image, bins string, p v1.Platform, m Meta, ann map[string]string) (v1.Image, error) {
	im := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	// The directories the image names, whichever layer has them: a later
	// layer's parent directories are written as the image says them.
	dirs := map[string]File{}
	for _, files := range img.Layers {
		for _, f := range files {
			if f.Dir {
				dirs[f.Path] = f
			}
		}
	}
	for i, files := range img.Layers {
		b, err := layerTar(files, dirs, bins, m.Created)
		if err != nil {
			return nil, err
		}
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil },
			tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, err
		}
		im, err = mutate.Append(im, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
			History: v1.History{Created: v1.Time{Time: m.Created}, CreatedBy: "aws-ccm-renderer images", Comment: layerComment(files, i)}})
		if err != nil {
			return nil, err
		}
	}
	cf, err := im.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: m.Created}
	cf.Config.User = img.User
	cf.Config.Entrypoint = img.Entrypoint
	cf.Config.Cmd = nil
	cf.Config.Env = img.Env
	cf.Config.WorkingDir = img.WorkingDir
	cf.Config.Labels = ann
	im, err = mutate.ConfigFile(im, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(im, ann).(v1.Image), nil
}

func layerComment(files []File, i int) string {
	var names []string
	for _, f := range files {
		if !f.Dir {
			names = append(names, f.Path)
		}
	}
	return fmt.Sprintf("layer %d: %s", i+1, strings.Join(names, " "))
}

// layerTar is a layer's tar: its files and their parent directories (as
// dirs has them, else root's 0755), in path order, every time the build's.
func layerTar(files []File, dirs map[string]File, bins string, created time.Time) ([]byte, error) {
	all := map[string]File{}
	for _, f := range files {
		all[strings.TrimPrefix(f.Path, "/")] = f
		for d := path.Dir(f.Path); d != "/"; d = path.Dir(d) {
			if _, ok := all[strings.TrimPrefix(d, "/")]; !ok {
				parent, ok := dirs[d]
				if !ok {
					parent = File{Path: d, Mode: 0o755, Dir: true}
				}
				all[strings.TrimPrefix(d, "/")] = parent
			}
		}
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	slices.Sort(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		f := all[n]
		h := &tar.Header{Name: n, Mode: f.Mode, Uid: f.UID, Gid: f.GID, ModTime: created, Format: tar.FormatPAX}
		content := f.Content
		if f.Program != "" {
			b, err := os.ReadFile(filepath.Join(bins, f.Program))
			if err != nil {
				return nil, fmt.Errorf("the program %s: %w (make images builds it)", f.Program, err)
			}
			content = b
		}
		if f.Dir {
			h.Typeflag, h.Name = tar.TypeDir, n+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(content))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteLayout writes the index as an OCI image layout in dir, replacing
// what was there, the index tagged with the version. The referrers of an
// index the same as the one written stay (the signatures make dist
// attached, which make push, building the images again, then pushes);
// another index's go.
func WriteLayout(dir string, idx v1.ImageIndex, version string) error {
	keep, err := keptReferrers(dir, idx)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	var opts []layout.Option
	if version != "" {
		opts = append(opts, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": version}))
	}
	if err := p.AppendIndex(idx, opts...); err != nil {
		return err
	}
	for _, r := range keep {
		for h, b := range r.blobs {
			if err := p.WriteBlob(h, io.NopCloser(bytes.NewReader(b))); err != nil {
				return err
			}
		}
		if err := p.AppendDescriptor(r.desc); err != nil {
			return err
		}
	}
	return nil
}

// referrerBlobs are a referrer's descriptor and blobs, read into memory.
type referrerBlobs struct {
	desc  v1.Descriptor
	blobs map[v1.Hash][]byte
}

// keptReferrers reads the referrers of dir's layout when its index is idx.
func keptReferrers(dir string, idx v1.ImageIndex) ([]referrerBlobs, error) {
	old, err := ReadLayout(dir)
	if err != nil {
		return nil, nil // no layout there, or not one of ours: nothing to keep
	}
	od, err := old.Digest()
	if err != nil {
		return nil, err
	}
	nd, err := idx.Digest()
	if err != nil || od != nd {
		return nil, err
	}
	refs, err := Referrers(dir)
	if err != nil {
		return nil, err
	}
	var out []referrerBlobs
	for _, img := range refs {
		desc, err := partial.Descriptor(img)
		if err != nil {
			return nil, err
		}
		r := referrerBlobs{desc: *desc, blobs: map[v1.Hash][]byte{}}
		raw, err := img.RawManifest()
		if err != nil {
			return nil, err
		}
		r.blobs[desc.Digest] = raw
		m, err := img.Manifest()
		if err != nil {
			return nil, err
		}
		if r.blobs[m.Config.Digest], err = img.RawConfigFile(); err != nil {
			return nil, err
		}
		for _, ld := range m.Layers {
			l, err := img.LayerByDigest(ld.Digest)
			if err != nil {
				return nil, err
			}
			rc, err := l.Compressed()
			if err != nil {
				return nil, err
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return nil, err
			}
			r.blobs[ld.Digest] = b
		}
		out = append(out, r)
	}
	return out, nil
}

// ReadLayout reads the image index of an OCI layout WriteLayout wrote: the
// one entry of index.json that is an image index (a signed layout also
// lists the referrers make dist attached to it, hack/sign).
func ReadLayout(dir string) (v1.ImageIndex, error) {
	p, top, err := readTop(dir)
	if err != nil {
		return nil, err
	}
	var found []v1.Descriptor
	for _, d := range top.Manifests {
		if d.MediaType == types.OCIImageIndex {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%s: %d image indexes in index.json, want one", dir, len(found))
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	return idx.ImageIndex(found[0].Digest)
}

func readTop(dir string) (layout.Path, *v1.IndexManifest, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return "", nil, err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return "", nil, err
	}
	m, err := idx.IndexManifest()
	return p, m, err
}

// Referrers are the manifests of a layout whose subject is its image
// index: the signature and attestations make dist attached (hack/sign),
// which make push pushes beside the image.
func Referrers(dir string) ([]v1.Image, error) {
	idx, err := ReadLayout(dir)
	if err != nil {
		return nil, err
	}
	d, err := idx.Digest()
	if err != nil {
		return nil, err
	}
	p, top, err := readTop(dir)
	if err != nil {
		return nil, err
	}
	var out []v1.Image
	for _, desc := range top.Manifests {
		if !desc.MediaType.IsImage() {
			continue
		}
		img, err := p.Image(desc.Digest)
		if err != nil {
			return nil, err
		}
		m, err := img.Manifest()
		if err != nil {
			return nil, err
		}
		if m.Subject != nil && m.Subject.Digest == d {
			out = append(out, img)
		}
	}
	return out, nil
}

// SBOMProgram is the program an image's SBOM describes: the largest it
// holds, aws-ccm-renderer-helm, whose modules include those of
// aws-ccm-renderer (one module, every command), else aws-ccm-renderer.
func (img Image) SBOMProgram() string {
	prog := ""
	for _, l := range img.Layers {
		for _, f := range l {
			if f.Program != "" && (prog == "" || f.Program == "aws-ccm-renderer-helm") {
				prog = f.Program
			}
		}
	}
	return prog
}

// digestRef matches an image reference pinned by digest:
// REGISTRY/.../NAME[:TAG]@sha256:HEX, NAME in group 2.
var digestRef = regexp.MustCompile(`([a-z0-9][a-z0-9.:_-]*(?:/[a-z0-9._-]+)*/)([a-z0-9._-]+)((?::[A-Za-z0-9_.-]+)?)@sha256:[0-9a-f]{64}`)

// Pinned are the references pinned by digest in text, by image name.
func Pinned(text string) map[string][]string {
	out := map[string][]string{}
	for _, m := range digestRef.FindAllStringSubmatch(text, -1) {
		out[m[2]] = append(out[m[2]], m[0])
	}
	return out
}

// Pin rewrites the digest of every reference to one of the images in
// text: digests by image name. References to other images are left.
func Pin(text string, digests map[string]v1.Hash) string {
	return digestRef.ReplaceAllStringFunc(text, func(ref string) string {
		m := digestRef.FindStringSubmatch(ref)
		d, ok := digests[m[2]]
		if !ok {
			return ref
		}
		return m[1] + m[2] + m[3] + "@" + d.String()
	})
}
