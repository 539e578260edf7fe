package releases

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
)

// Of returns the releases of a Kubernetes minor, and whether any is known.
func Of(minor int) (CCMMinor, bool) {
	i := slices.IndexFunc(CCM, func(c CCMMinor) bool { return c.Minor == minor })
	if i < 0 {
		return CCMMinor{}, false
	}
	return CCM[i], true
}

// Latest returns the CCM tag to pin for a cluster of Kubernetes 1.minor,
// and whether one is known.
func Latest(minor int) (string, bool) {
	c, ok := Of(minor)
	return c.Latest, ok
}

// ForCluster returns the releases of the minor of a cluster's version
// (v1.34.2, 1.34, v1.34.2+rke2r1): its Latest is the CCM to pin for that
// cluster. It fails on what is not a version and on a minor without a known
// release, saying what to do.
func ForCluster(kubeVersion string) (CCMMinor, error) {
	v, err := kubeversion.Parse(kubeVersion)
	if err != nil {
		return CCMMinor{}, err
	}
	c, ok := Of(int(v.Minor()))
	if !ok {
		return CCMMinor{}, fmt.Errorf("no CCM release of Kubernetes 1.%d is known to this program (it knows 1.%d to 1.%d): pin the CCM's image tag, a v1.%d.x release", v.Minor(), FirstMinor(), LastMinor(), v.Minor())
	}
	return c, nil
}

// Tag returns Latest, or "v1.<minor>.<patch>" for the user to fill in.
func Tag(minor int) string {
	if tag, ok := Latest(minor); ok {
		return tag
	}
	return fmt.Sprintf("v1.%d.<patch>", minor)
}

// SourceOf says where the tag of a minor comes from, for people.
func SourceOf(minor int) string {
	if c, ok := Of(minor); ok && c.Unpromoted() {
		return fmt.Sprintf("the newest 1.%d release the Go module proxy serves (k8s.io/cloud-provider-aws); its image is not yet seen in registry.k8s.io's promotion list (kubernetes/k8s.io, registry.k8s.io/images/k8s-staging-provider-aws/images.yaml)", minor)
	}
	return CCMSource
}

// Unpromoted reports whether Latest's image is not in the promotion list
// (Promoted): its digest is unknown, so check that the image exists, and
// read its digest, before pinning it.
func (c CCMMinor) Unpromoted() bool {
	_, ok := Promoted[c.Latest]
	return !ok
}

// Digest returns the digest of a tag's image as the promotion list gives
// it, and whether the list has the tag.
func Digest(tag string) (string, bool) {
	d, ok := Promoted[tag]
	return d, ok
}

// Pin returns what to pin of a CCM release: tag@digest when the promotion
// list gives the tag's digest, else the tag alone (an image not yet seen
// promoted: resolve its digest before pinning it).
func Pin(tag string) string {
	if d, ok := Promoted[tag]; ok {
		return tag + "@" + d
	}
	return tag
}

// ImageRepository is where the CCM's images are promoted: the repository
// whose tags Promoted gives the digests of.
const ImageRepository = "registry.k8s.io/provider-aws/cloud-controller-manager"

// DigestCommand is the command that reads the digest of a CCM release's
// image from the registry (crane, go-containerregistry's CLI): what the
// front ends and the plans name for a tag the promotion list does not give.
func DigestCommand(tag string) string { return "crane digest " + ImageRepository + ":" + tag }

// PinHint is what a refusal or a fix names to pin a release: Pin's
// tag@digest, or for a tag the promotion list does not give, the tag with
// the command that reads its digest.
func PinHint(tag string) string {
	if _, ok := Promoted[tag]; ok {
		return Pin(tag)
	}
	return tag + "@<its digest: " + DigestCommand(tag) + ">"
}

// Tags returns every minor's Latest, by minor.
func Tags() map[int]string {
	m := make(map[int]string, len(CCM))
	for _, c := range CCM {
		m[c.Minor] = c.Latest
	}
	return m
}

// FirstMinor and LastMinor are the oldest and newest minors with a known
// release.
func FirstMinor() int { return CCM[0].Minor }
func LastMinor() int  { return CCM[len(CCM)-1].Minor }

// parse reads a release tag (v1.30.10, 1.30.10, v1.35.0-alpha.0).
func parse(tag string) (*version.Version, bool) {
	v, err := kubeversion.Parse(tag)
	if err != nil {
		return nil, false
	}
	return v, true
}

// UsesSDKv2 reports whether a CCM release (its image tag, v1.30.10) calls
// AWS with aws-sdk-go-v2; ok is false when the tag is no version.
func UsesSDKv2(tag string) (v2, ok bool) {
	v, ok := parse(tag)
	if !ok {
		return false, false
	}
	minor := int(v.Minor())
	if minor > LastMinor() {
		return true, true
	}
	for _, c := range CCM {
		if c.Minor == minor {
			return c.SDKv2From >= 0 && int(v.Patch()) >= c.SDKv2From, true
		}
	}
	return false, true // older than any release with v2
}

// SDKv2Releases says which releases are on aws-sdk-go-v2, for people.
func SDKv2Releases() string {
	var firsts []string
	all := 0
	for _, c := range CCM {
		switch {
		case c.SDKv2From > 0:
			firsts = append(firsts, fmt.Sprintf("v1.%d.%d", c.Minor, c.SDKv2From))
		case c.SDKv2From == 0 && all == 0:
			all = c.Minor
		}
	}
	return fmt.Sprintf("%s and every later patch of their minors, and every release from v1.%d.0", strings.Join(firsts, ", "), all)
}

// IAMControlPlane returns the control-plane policy's actions of
// docs/prerequisites.md at a CCM tag, sorted.
func IAMControlPlane(tag string) []string {
	v := version.MustParseGeneric(tag)
	a := slices.Clone(IAMControlPlaneBase)
	for _, x := range IAMAdded {
		if sinceLines(x.Since, v) {
			a = append(a, x.Action)
		}
	}
	slices.Sort(a)
	return a
}

// IAMNode returns the node policy's actions, sorted.
func IAMNode() []string { return slices.Sorted(slices.Values(IAMNodePolicy)) }

// LabelsZoneID reports whether a CCM release labels nodes with their zone
// ID, and so needs ec2:DescribeAvailabilityZones to initialise any node.
func LabelsZoneID(tag string) bool {
	v, ok := parse(tag)
	return ok && v.AtLeast(version.MustParseGeneric(NodeZoneIDFrom))
}

// DefectsOf returns the known defects of a CCM release.
func DefectsOf(tag string) []Defect {
	v, ok := parse(tag)
	if !ok {
		return nil
	}
	var out []Defect
	for _, d := range Defects {
		if inRanges(d.Affected, v) {
			out = append(out, d)
		}
	}
	return out
}

// inRanges reports whether v is in one of the inclusive ranges
// "v1.34.0-v1.34.3".
func inRanges(ranges []string, v *version.Version) bool {
	for _, r := range ranges {
		lo, hi, _ := strings.Cut(r, "-v")
		if v.AtLeast(version.MustParseGeneric(lo)) && !v.GreaterThan(version.MustParseGeneric("v"+hi)) {
			return true
		}
	}
	return false
}

// sinceLines reports whether release v has what came with the first
// releases since, one per release line: v is at least the entry of its own
// minor, or, when its minor has no entry, at least one entry of an older
// minor. An empty list: every release.
func sinceLines(since []string, v *version.Version) bool {
	if len(since) == 0 {
		return true
	}
	older := false
	for _, s := range since {
		e := version.MustParseGeneric(s)
		if e.Minor() == v.Minor() {
			return v.AtLeast(e)
		}
		older = older || e.Minor() < v.Minor()
	}
	return older
}

// UnknownKeyFatal reports whether a CCM release refuses a cloud config with
// a key it does not read.
func UnknownKeyFatal(tag string) bool {
	v, ok := parse(tag)
	return ok && inRanges(UnknownKeysFatal, v)
}

// ReadsKey reports whether a CCM release reads a cloud config [Global]
// key, and the key's record when it is one of CloudConfigKeys; a key not
// among them is read by every release.
func ReadsKey(tag, key string) (bool, *CloudConfigKey) {
	v, ok := parse(tag)
	for i, k := range CloudConfigKeys {
		if !strings.EqualFold(k.Key, key) {
			continue
		}
		if !ok {
			return true, &CloudConfigKeys[i]
		}
		if k.RemovedIn != "" && v.AtLeast(version.MustParseGeneric(k.RemovedIn)) {
			return false, &CloudConfigKeys[i]
		}
		return sinceLines(k.Since, v), &CloudConfigKeys[i]
	}
	return true, nil
}

// Changes returns the option changes of a component in force at Kubernetes
// 1.minor (for a distribution: at the first release of the minor's line,
// when the change came with a patch release).
func Changes(component string, minor int) []OptionChange {
	var out []OptionChange
	for _, c := range OptionChanges {
		if c.Component != component {
			continue
		}
		if c.In(minor) {
			out = append(out, c)
		}
	}
	return out
}

// FirstMinor is the first Kubernetes minor at which the change is in force
// (In); 0 when it is in force at every release.
func (c OptionChange) FirstMinor() int {
	if c.Minor != 0 || c.In(0) {
		return c.Minor
	}
	for m := FirstMinor(); m <= LastMinor(); m++ {
		if c.In(m) {
			return m
		}
	}
	return LastMinor() + 1
}

// In reports whether the change is in force at every release of
// Kubernetes 1.minor (for a distribution: from the first release of the
// minor's line).
func (c OptionChange) In(minor int) bool {
	if c.Minor != 0 {
		return minor >= c.Minor
	}
	return changedBy(c.Releases, minor)
}

// InRelease reports whether the change is in force at a release of its
// component: a distribution release (v1.31.3+rke2r1) or a Kubernetes
// version; false when release is no version.
func (c OptionChange) InRelease(release string) bool {
	v, err := version.ParseGeneric(strings.SplitN(release, "+", 2)[0])
	if err != nil {
		return false
	}
	if c.Minor != 0 || len(c.Releases) == 0 {
		return int(v.Minor()) >= c.Minor
	}
	return sinceLines(lineVersions(c.Releases), v)
}

// FirstAfter returns the first release with the change that an upgrade
// from release reaches: its line's, or the next line's when its own line
// has none; "" when release is no version, the change is in force at it,
// or the change has no releases.
func (c OptionChange) FirstAfter(release string) string {
	v, err := version.ParseGeneric(strings.SplitN(release, "+", 2)[0])
	if err != nil || c.InRelease(release) {
		return ""
	}
	for _, r := range c.Releases {
		if e := version.MustParseGeneric(strings.SplitN(r, "+", 2)[0]); e.Minor() >= v.Minor() {
			return r
		}
	}
	return ""
}

// lineVersions drops the distribution's build metadata from its releases:
// v1.31.3+rke2r1 is v1.31.3.
func lineVersions(releases []string) []string {
	lines := make([]string, 0, len(releases))
	for _, r := range releases {
		lines = append(lines, strings.SplitN(r, "+", 2)[0])
	}
	return lines
}

// Change returns the change of a component's option, by Option.
func Change(component, option string) (OptionChange, bool) {
	i := slices.IndexFunc(OptionChanges, func(c OptionChange) bool { return c.Component == component && c.Option == option })
	if i < 0 {
		return OptionChange{}, false
	}
	return OptionChanges[i], true
}

// changedBy reports whether every release of the minor's line has the
// change: the first release of its line (v1.<minor>.0) has it.
func changedBy(releases []string, minor int) bool {
	return sinceLines(lineVersions(releases), version.MajorMinor(1, uint(minor)))
}

// ReleasesOf returns the first distribution releases of a change as a list
// for people: "v1.29.11+rke2r1, v1.30.7+rke2r1 and v1.31.3+rke2r1".
func (c OptionChange) ReleasesOf() string {
	switch {
	case len(c.Releases) == 0 && c.Minor == 0:
		return "every release"
	case len(c.Releases) == 0:
		return fmt.Sprintf("1.%d", c.Minor)
	case len(c.Releases) == 1:
		return c.Releases[0]
	}
	return strings.Join(c.Releases[:len(c.Releases)-1], ", ") + " and " + c.Releases[len(c.Releases)-1]
}

// Newer returns the tags among served (versions of k8s.io/cloud-provider-aws,
// as the Go module proxy lists them) that are newer than the release the
// data pins for their minor, or of a minor past the table, sorted; a
// pre-release or a tag that is no version is left out.
func Newer(served []string) []string {
	var out []*version.Version
	for _, s := range served {
		v, err := version.ParseSemantic(s)
		if err != nil || v.Major() != 1 || v.PreRelease() != "" {
			continue
		}
		latest, ok := Latest(int(v.Minor()))
		if ok && !v.GreaterThan(version.MustParseSemantic(latest)) || !ok && int(v.Minor()) < FirstMinor() || unpulled("v"+v.String()) {
			continue
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *version.Version) int {
		switch {
		case a.LessThan(b):
			return -1
		case b.LessThan(a):
			return 1
		}
		return 0
	})
	tags := make([]string, 0, len(out))
	for _, v := range out {
		tag := "v" + v.String()
		if !slices.Contains(tags, tag) {
			tags = append(tags, tag)
		}
	}
	return tags
}

// unpulled reports whether a tag is one of CCM's Unpulled.
func unpulled(tag string) bool {
	for _, c := range CCM {
		if slices.Contains(c.Unpulled, tag) {
			return true
		}
	}
	return false
}

// Candidates are the tags worth asking the module proxy for, beyond the
// ones it lists (it lists only some): the next patch of every minor of the
// table and the first release of the next two minors.
func Candidates() []string {
	var c []string
	for _, m := range CCM {
		last := m.Latest
		if len(m.Unpulled) > 0 {
			last = m.Unpulled[len(m.Unpulled)-1]
		}
		v := version.MustParseSemantic(last)
		c = append(c, fmt.Sprintf("v1.%d.%d", m.Minor, v.Patch()+1))
	}
	return append(c, fmt.Sprintf("v1.%d.0", LastMinor()+1), fmt.Sprintf("v1.%d.0", LastMinor()+2))
}

// HasAction reports whether a CCM release's control-plane policy has an
// action (IAMAdded): a tag that is no version counts as the newest.
func HasAction(tag, action string) bool {
	if _, ok := parse(tag); !ok {
		tag = Newest()
	}
	return slices.Contains(IAMControlPlane(tag), action)
}

// Newest is the newest CCM release known: its policy holds every action
// of the older ones.
func Newest() string { return CCM[len(CCM)-1].Latest }

// DefaultImageTag returns the CCM image tag a chart version ("0.0.11" or
// "v0.0.11") deploys by default, and whether the version is known.
func DefaultImageTag(chartVersion string) (string, bool) {
	tag, ok := ChartImages[strings.TrimPrefix(chartVersion, "v")]
	return tag, ok
}

// ProviderIDFallback reports whether a CCM release initialises a node whose
// providerID it cannot read by looking the node up by its name
// (ProviderIDFallbackUntil); ok is false when the tag is no version.
func ProviderIDFallback(tag string) (fallback, ok bool) {
	v, ok := parse(tag)
	if !ok {
		return false, false
	}
	return int(v.Minor()) <= ProviderIDFallbackUntil, true
}

// KnownKey returns a [Global] key as the CCM's releases spell it, and
// whether any release reads it (gcfg matches names without regard to case).
func KnownKey(key string) (string, bool) {
	for _, k := range CloudConfigBaseKeys {
		if strings.EqualFold(k, key) {
			return k, true
		}
	}
	for _, k := range CloudConfigKeys {
		if strings.EqualFold(k.Key, key) {
			return k.Key, true
		}
	}
	return key, false
}
