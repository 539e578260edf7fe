package check

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// minorOf reads 1.MINOR from a version (v1.34.10, v1.30.14+rke2r1, 1.27)
// as the whole program reads one (internal/kubeversion).
func minorOf(v string) (int, bool) {
	m, err := kubeversion.Minor(v)
	return m, err == nil
}

// versionRule compares the CCM's image with the API server (the
// Kubernetes skew policy: a cloud-controller-manager may match the API
// server's minor or be one older, never newer), names the chart, and
// checks what depends on the CCM's version in migrate mode.
func versionRule(v *View) []Finding {
	server, serverOK := minorOf(v.KubernetesVersion)
	if v.Workload == nil {
		return []Finding{{Area: AreaVersion, Severity: Info, Message: "Kubernetes " + v.KubernetesVersion}}
	}
	w := v.Workload
	var out []Finding
	tag := renderer.ImageTag(w.Image)
	ccm, ccmOK := minorOf(tag)
	f := Finding{Area: AreaVersion, Subject: "image " + w.Image}
	switch {
	case !ccmOK || !serverOK:
		f.Severity = Warning
		f.Message = fmt.Sprintf("cannot tell the CCM's Kubernetes minor from tag %q (API server %s)", tag, v.KubernetesVersion)
		f.Fix = "use a release tag of the AWS CCM that matches the cluster's minor, e.g. v1." + strconv.Itoa(server) + ".x"
	case ccm == server:
		f.Severity = OK
		f.Message = fmt.Sprintf("CCM %s matches the API server %s", tag, v.KubernetesVersion)
	case ccm == server-1:
		f.Severity = Warning
		f.Message = fmt.Sprintf("CCM %s is one minor older than the API server %s: the skew policy allows it during an upgrade; the AWS CCM is released per Kubernetes minor", tag, v.KubernetesVersion)
		f.Fix = fmt.Sprintf("move to an AWS CCM v1.%d release (the chart's image.tag value)", server)
	case ccm > server:
		f.Severity = Error
		f.Message = fmt.Sprintf("CCM %s is newer than the API server %s: the skew policy allows a cloud-controller-manager at the API server's minor or one older, never newer", tag, v.KubernetesVersion)
		f.Fix = fmt.Sprintf("use an AWS CCM v1.%d release (the chart's image.tag value), or upgrade the cluster first", server)
	default:
		f.Severity = Error
		f.Message = fmt.Sprintf("CCM %s is %d minors older than the API server %s: the skew policy allows one", tag, server-ccm, v.KubernetesVersion)
		f.Fix = fmt.Sprintf("use an AWS CCM v1.%d release (the chart's image.tag value)", server)
	}
	out = append(out, f)
	if pin := tagAlone(w.Image); pin != "" {
		out = append(out, Finding{Area: AreaVersion, Severity: Info, Subject: "image pin",
			Message: w.Image + " is pinned by tag alone: a tag can move", Fix: "--set image.tag=" + pin})
	}
	if w.Chart != "" {
		msg := "chart " + w.Chart
		if i := strings.LastIndexByte(w.Chart, '-'); i > 0 {
			if def, ok := releases.DefaultImageTag(w.Chart[i+1:]); ok {
				msg += " (its default image is " + def + ")"
			}
		}
		out = append(out, Finding{Area: AreaVersion, Severity: Info, Message: msg})
	}
	if w.Mode != string(renderer.ModeMigrate) {
		return out
	}
	if serverOK && server >= 27 {
		out = append(out, Finding{Area: AreaVersion, Severity: Warning, Subject: "leader migration",
			Message: fmt.Sprintf("Kubernetes %s has no in-tree AWS provider (removed in 1.27): leader migration hands controllers over from a 1.26 or older controller manager", v.KubernetesVersion),
			Fix:     "on 1.27 and later render with --mode=install"})
	}
	if w.lmc != nil && ccmOK {
		api, known := renderer.MigrationAPIOf(w.lmc.APIVersion)
		need, _ := minorOf(api.Since)
		if !known {
			out = append(out, Finding{Area: AreaVersion, Severity: Error, Subject: "leader migration",
				Message: fmt.Sprintf("the LeaderMigrationConfiguration's apiVersion %q is none the CCM reads", w.lmc.APIVersion),
				Fix:     "render it with aws-ccm-renderer --mode=migrate"})
		} else if ccm < need {
			out = append(out, Finding{Area: AreaVersion, Severity: Error, Subject: "leader migration",
				Message: fmt.Sprintf("CCM %s cannot read a LeaderMigrationConfiguration of %s (its libraries know it from 1.%d)", tag, w.lmc.APIVersion, need),
				Fix:     fmt.Sprintf("use a CCM of 1.%d or later", need)})
		}
	}
	return out
}

// tagAlone is what to pin for an image of registry.k8s.io's CCM given by
// tag without a digest (releases.PinHint: by the promotion list's digest,
// or with the command that reads it), "" for any other image.
func tagAlone(image string) string {
	tag, ok := upstreamTag(image)
	if !ok {
		return ""
	}
	return releases.PinHint(tag)
}

// upstreamTag is the tag of an image of registry.k8s.io's CCM given by tag
// without a digest; false for any other image.
func upstreamTag(image string) (string, bool) {
	img, err := renderer.ParseImage(image)
	if err != nil || img.Registry+"/"+img.Repository != releases.ImageRepository || img.Tag == "" || img.Digest != "" {
		return "", false
	}
	return img.Tag, true
}
