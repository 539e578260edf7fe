// Package conformance is the table every front end is held to: for each
// case (distribution, mode, chart version, the cluster's version, the CCM's
// tag, strictness) the post-renderer, the Helm 4 plugin, the chart wrapper,
// the KRM function, the kustomize overlays, the Argo CD plugin, the Fleet
// bundle, the wrapper chart and helmfile give manifests that mean what the
// renderer's mean, or the renderer's warning or refusal in the renderer's
// words (renderer.Verdict). Where a front end cannot do what a case asks
// (the wrapper chart has no node affinity value for distro auto; a chart
// cannot be strict), its FrontEnd says so in a Limit, with the words it
// says instead, and the test holds it to those.
//
// Each front end's test package runs the table with its real tool
// (conformancetest.Run); TestEveryFrontEnd fails when a front end has no
// such test.
package conformance

import (
	"fmt"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// Outcome is what a front end does with a case.
type Outcome string

const (
	Rendered Outcome = "rendered"              // manifests, no warning
	Warned   Outcome = "rendered with warning" // manifests, and the verdict's words where the user reads them
	Refused  Outcome = "refused"               // a non-zero exit, nothing on stdout, the verdict's words
	// Inexpressible: the front end has no way to be asked for the case
	// (the wrapper chart's dependency is one chart version); a Limit only.
	Inexpressible Outcome = "cannot be asked"
)

// Kind is what a case tries, whatever its distribution.
type Kind string

const (
	Install           Kind = "install"
	InstallPinned     Kind = "install, the CCM of an older cluster"
	InstallOlder      Kind = "install, chart 0.0.8"
	InstallSkew       Kind = "install, the CCM of another minor"
	InstallSkewStrict Kind = "install, the CCM of another minor, strict"
	Migrate           Kind = "migrate"
	MigrateSkew       Kind = "migrate, the CCM of another minor"
	MigrateUnknown    Kind = "migrate, the cluster's version not told"
	MigrateNoInTree   Kind = "migrate, a cluster past the in-tree provider"
	NoMigrateMode     Kind = "migrate, a distribution without migrate mode"
)

// Case is one row of the table.
type Case struct {
	Name         string
	Kind         Kind
	Distro       distros.Distro
	Mode         renderer.Mode
	ChartVersion string // the upstream chart's version
	KubeVersion  string // the cluster's version, as the front end learns it
	CCMTag       string // the chart's image.tag; "" keeps the chart's default
	Strict       bool
	Want         Outcome
	Verdict      renderer.Verdict // of Warned and Refused
}

// Tag is the CCM's image tag the case deploys: CCMTag, else the chart
// version's default.
func (c Case) Tag() string {
	if c.CCMTag != "" {
		return c.CCMTag
	}
	tag, _ := releases.DefaultImageTag(c.ChartVersion)
	return tag
}

// Options are the renderer's options for the case.
func (c Case) Options() renderer.Options {
	o := renderer.DefaultOptions()
	o.Distro, o.Mode, o.KubeVersion, o.Strict = c.Distro, c.Mode, c.KubeVersion, c.Strict
	return o
}

// minorOf is the minor of a Kubernetes version ("v1.33.5" gives 33).
func minorOf(v string) int {
	var minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(v, "v"), "1.%d.", &minor); err != nil {
		panic("conformance: not a Kubernetes version: " + v)
	}
	return minor
}

// ClusterRelease is the CCM release of the case's cluster's minor, pinned
// by digest (releases.Pin), as the front ends that pin one pin it; the
// last minor with the in-tree provider's in migrate mode when the case
// does not tell the cluster's version; else none.
func ClusterRelease(c Case) string {
	switch {
	case c.KubeVersion != "":
		return releases.Pin(releases.Tag(minorOf(c.KubeVersion)))
	case c.Mode == renderer.ModeMigrate:
		return releases.Pin(releases.Tag(releases.LastInTreeMinor))
	}
	return ""
}

// kubeOf is a cluster version of the minor of a CCM tag ("v1.35.0" gives
// "v1.35.2").
func kubeOf(tag string) string { return fmt.Sprintf("v1.%d.2", minorOf(tag)) }

// Cases is the table: every distribution's install (and auto's), every
// migrate mode's migration, and the verdicts on the first distribution of
// each kind. Its versions come from the release data and the upstream
// chart's defaults, so that it follows them.
func Cases() []Case {
	latest := upstream.LatestChartVersion
	def, _ := releases.DefaultImageTag(latest)
	kube := kubeOf(def) // a cluster of the minor the latest chart deploys
	last := releases.LastInTreeMinor
	migrateKube := fmt.Sprintf("v1.%d.15", last)
	// An older cluster than the latest chart's CCM, two minors back; a
	// cluster two minors past the last with the in-tree provider.
	olderMinor, pastMinor := minorOf(def)-2, last+2
	olderKube, pastKube := fmt.Sprintf("v1.%d.5", olderMinor), fmt.Sprintf("v1.%d.3", pastMinor)
	const older = "0.0.8"
	olderTag, _ := releases.DefaultImageTag(older)
	named := distros.Named(distros.Records())
	migrating := distros.WithMigrate(named, true)
	var out []Case
	add := func(k Kind, p distros.Record, c Case) {
		c.Kind, c.Distro = k, p.Distro
		c.Name = string(p.Distro) + " " + string(k)
		if c.Mode == "" {
			c.Mode = renderer.ModeInstall
		}
		if c.ChartVersion == "" {
			c.ChartVersion = latest
		}
		if c.Want == "" {
			c.Want = Rendered
		}
		out = append(out, c)
	}
	auto, _ := distros.RecordOf(distros.Auto)
	for _, p := range append([]distros.Record{auto}, named...) {
		add(Install, p, Case{KubeVersion: kube})
	}
	first := named[0]
	add(InstallPinned, first, Case{KubeVersion: olderKube, CCMTag: releases.Pin(releases.Tag(olderMinor))})
	add(InstallOlder, first, Case{ChartVersion: older, KubeVersion: kubeOf(olderTag)})
	add(InstallSkew, first, Case{KubeVersion: olderKube, Want: Warned, Verdict: renderer.VerdictSkewInstall})
	add(InstallSkewStrict, first, Case{KubeVersion: olderKube, Strict: true, Want: Refused, Verdict: renderer.VerdictSkewInstall})
	migrate := Case{Mode: renderer.ModeMigrate, KubeVersion: migrateKube, CCMTag: releases.Pin(releases.Tag(last))}
	for _, p := range migrating {
		add(Migrate, p, migrate)
	}
	m := migrating[0]
	add(MigrateSkew, m, Case{Mode: renderer.ModeMigrate, KubeVersion: migrateKube, Want: Refused, Verdict: renderer.VerdictSkewMigrate})
	add(MigrateUnknown, m, Case{Mode: renderer.ModeMigrate, Want: Refused, Verdict: renderer.VerdictClusterUnknown})
	add(MigrateNoInTree, m, Case{Mode: renderer.ModeMigrate, KubeVersion: pastKube, CCMTag: releases.Pin(releases.Tag(pastMinor)), Want: Refused, Verdict: renderer.VerdictNoInTree})
	for _, p := range distros.WithMigrate(named, false) {
		migrate := migrate
		migrate.Want, migrate.Verdict = Refused, renderer.VerdictNoMigrateMode
		add(NoMigrateMode, p, migrate)
	}
	return out
}

// Limit is what a front end does instead of what a case wants, and why.
type Limit struct {
	Want  Outcome
	Words string // what it says instead (for Refused and Warned)
	// Distro: it renders this distribution's placement instead (for
	// Rendered and Warned).
	Distro distros.Distro
	Why    string
}

// FrontEnd is one way users run the renderer.
type FrontEnd struct {
	ID    string // its variable's name in this package
	Name  string
	Where string // the test package that runs it through the table
	// Limit says what it does instead of what a case wants, if it does.
	Limit func(Case) (Limit, bool)
	// Pins: where the case keeps the chart's default image, the CCM release
	// the front end deploys instead ("" none); its manifests are then
	// compared with the renderer's for that image.
	Pins func(Case) string
	// Unrecorded: the front end does not record the options on the
	// workload (renderer.OptionsAnnotation, what the chart wrapper's
	// upgrade reads): why.
	Unrecorded string
	// TerminalOnly: the front end's tool shows the renderer's messages on
	// no channel but the terminal, which the renderer then writes them to:
	// why.
	TerminalOnly string
	// Guard: the front end adds the guard (the pinned image of
	// internal/images) as its default; the renderer's manifests are
	// compared with the guard too.
	Guard bool
	// Quiet: warnings do not reach the user when the front end renders
	// (Argo CD shows a plugin's stderr only when it fails); with Warned
	// the test then wants the manifests alone.
	Quiet string
}

// RendererArgs are the case's options as the renderer's flags.
func RendererArgs(c Case) []string {
	return renderer.FlagArgs(c.Options(), renderer.OptDistro, renderer.OptMode, renderer.OptKubeVersion, renderer.OptStrict)
}

// ChartValues are the case's chart values as helm --set flags.
func ChartValues(c Case) []string {
	if c.CCMTag == "" {
		return nil
	}
	return []string{"--set", "image.tag=" + c.CCMTag}
}
