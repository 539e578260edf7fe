package check

import (
	"bufio"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// The CCM's cloud config (--cloud-config), read where check can: a key of
// the ConfigMap or Secret the file is mounted from, among the manifests or
// in the cluster. Only its [ServiceOverride] sections' Service and Region
// are read; nothing of it is printed.

// CloudConfig is the CCM's cloud config as Collect found it.
type CloudConfig struct {
	// From names where it is: "ConfigMap NS/NAME (key KEY)".
	From string
	// Text is the file; empty when it could not be read.
	Text string
	// Missing: the object it is mounted from does not exist; Forbidden:
	// check may not read it (a Secret, say).
	Missing, Forbidden bool
}

// mountSource is the object and key a file in the container is mounted
// from.
type mountSource struct {
	kind, name, key string // kind ConfigMap or Secret
}

// fileSource finds the ConfigMap or Secret, and its key, a file path in
// the container is mounted from.
func fileSource(spec corev1.PodSpec, c corev1.Container, file string) (mountSource, bool) {
	for _, m := range c.VolumeMounts {
		var rel string
		switch {
		case m.SubPath != "" && file == m.MountPath:
			rel = m.SubPath
		case m.SubPath == "" && strings.HasPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/"):
			rel = strings.TrimPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/")
		default:
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name != m.Name {
				continue
			}
			var src mountSource
			var items []corev1.KeyToPath
			switch {
			case v.ConfigMap != nil:
				src, items = mountSource{kind: "ConfigMap", name: v.ConfigMap.Name}, v.ConfigMap.Items
			case v.Secret != nil:
				src, items = mountSource{kind: "Secret", name: v.Secret.SecretName}, v.Secret.Items
			default:
				return mountSource{}, false
			}
			src.key = rel
			for _, item := range items {
				if item.Path == rel {
					src.key = item.Key
				}
			}
			return src, true
		}
	}
	return mountSource{}, false
}

// configMapSource finds the ConfigMap and key a file path in the container
// is mounted from.
func configMapSource(spec corev1.PodSpec, c corev1.Container, file string) (name, key string, ok bool) {
	src, ok := fileSource(spec, c, file)
	if !ok || src.kind != "ConfigMap" {
		return "", "", false
	}
	return src.name, src.key, true
}

// collectCloudConfig reads the file the CCM's --cloud-config names: from
// the manifests, else from the cluster. A Secret check may not read is a
// fact of the snapshot, not an error.
func (s *Snapshot) collectCloudConfig(ctx context.Context, client kubernetes.Interface) error {
	w := describeWorkload(s)
	if w == nil || w.flags["cloud-config"] == "" {
		return nil
	}
	src, ok := fileSource(w.spec, w.ctr, w.flags["cloud-config"])
	if !ok {
		return nil
	}
	ns := s.Workload.namespace
	cc := &CloudConfig{From: fmt.Sprintf("%s %s/%s (key %s)", src.kind, ns, src.name, src.key)}
	s.CloudConfig = cc
	if text, found := cloudConfigIn(s.Objects, src, ns); found {
		cc.Text = text
		return nil
	}
	var err error
	switch src.kind {
	case "ConfigMap":
		var cm *corev1.ConfigMap
		if cm, err = client.CoreV1().ConfigMaps(ns).Get(ctx, src.name, metav1.GetOptions{}); err == nil {
			cc.Text = cm.Data[src.key]
		}
	default:
		var sec *corev1.Secret
		if sec, err = client.CoreV1().Secrets(ns).Get(ctx, src.name, metav1.GetOptions{}); err == nil {
			cc.Text = string(sec.Data[src.key])
		}
	}
	switch {
	case err == nil:
	case apierrors.IsNotFound(err):
		cc.Missing = true
	case apierrors.IsForbidden(err) && src.kind == "Secret":
		cc.Forbidden = true
	default:
		return clusterError("get", strings.ToLower(src.kind)+"s", ns, err)
	}
	return nil
}

// cloudConfigIn finds the mounted key among the manifests' objects.
func cloudConfigIn(objs []runtime.Object, src mountSource, ns string) (string, bool) {
	for _, o := range objs {
		switch x := o.(type) {
		case *corev1.ConfigMap:
			if src.kind == "ConfigMap" && x.Name == src.name && (x.Namespace == ns || x.Namespace == "") {
				return x.Data[src.key], true
			}
		case *corev1.Secret:
			if src.kind == "Secret" && x.Name == src.name && (x.Namespace == ns || x.Namespace == "") {
				if v, ok := x.StringData[src.key]; ok {
					return v, true
				}
				return string(x.Data[src.key]), true
			}
		}
	}
	return "", false
}

// ServiceOverride is one [ServiceOverride "N"] section.
type ServiceOverride struct {
	section, service, region, url string
}

// Service, Region and URL are the section's Service, Region ("": any)
// and URL.
func (o ServiceOverride) Service() string { return o.service }
func (o ServiceOverride) Region() string  { return o.region }
func (o ServiceOverride) URL() string     { return o.url }

// Head is the section's header as written, between the brackets.
func (s IniSection) Head() string { return s.head }

// IniSection is one section of a cloud config: its name, its subsection
// ("" without one) and its variables, by lower-case name.
type IniSection struct {
	name, sub string
	// head is the section's header as written, between the brackets.
	head string
	vars map[string]string
	// names are the variables' names as written, in order.
	names []string
}

// IniSections reads a cloud config as gcfg does: section and variable
// names without regard to case, values trimmed and unquoted, ; and #
// comments. A later value of a variable replaces an earlier one.
func IniSections(text string) []IniSection {
	var out []IniSection
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' || line[0] == '#' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			head := strings.TrimSpace(strings.Trim(line, "[]"))
			name, sub, _ := strings.Cut(head, " ")
			out = append(out, IniSection{name: strings.ToLower(name), sub: strings.Trim(strings.TrimSpace(sub), `"`), head: head, vars: map[string]string{}})
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || len(out) == 0 {
			continue
		}
		sec := &out[len(out)-1]
		name := strings.TrimSpace(k)
		if _, seen := sec.vars[strings.ToLower(name)]; !seen {
			sec.names = append(sec.names, name)
		}
		sec.vars[strings.ToLower(name)] = strings.Trim(strings.TrimSpace(v), `"`)
	}
	return out
}

// ServiceOverrides reads the [ServiceOverride] sections of a cloud config.
func ServiceOverrides(text string) []ServiceOverride {
	var out []ServiceOverride
	for _, s := range IniSections(text) {
		if s.name == "serviceoverride" {
			out = append(out, ServiceOverride{section: s.sub, service: s.vars["service"], region: s.vars["region"], url: s.vars["url"]})
		}
	}
	return out
}

// GlobalSetting reads a variable of the cloud config's [Global] section.
func GlobalSetting(text, name string) string {
	val := ""
	for _, s := range IniSections(text) {
		if s.name == "global" {
			if v, ok := s.vars[strings.ToLower(name)]; ok {
				val = v
			}
		}
	}
	return val
}

// cloudConfigRule reports the [ServiceOverride] sections the CCM's release
// ignores: an endpoint ID for a release on aws-sdk-go-v2, a service ID for
// one on aws-sdk-go (upstream.UsesSDKv2), when no section names the same
// service and region the release's way. Its calls then go to the public
// endpoint.
func cloudConfigRule(v *View) []Finding {
	w, cc := v.Workload, v.CloudConfig
	if w == nil || cc == nil {
		return nil
	}
	subject := "cloud config " + cc.From
	switch {
	case cc.Missing:
		sev := Warning
		if w.Installed {
			sev = Error
		}
		return []Finding{{Area: AreaWorkload, Severity: sev, Subject: subject,
			Message: "the CCM's --cloud-config is mounted from it, and it does not exist: the CCM's pods cannot start",
			Fix:     "create it (plan step before.cloud-config) before installing the CCM"}}
	case cc.Forbidden:
		return []Finding{{Area: AreaWorkload, Severity: Info, Subject: subject,
			Message: "check may not read it: its [ServiceOverride] names are not checked",
			Fix:     "grant get on that Secret to whoever runs check, or check the names by hand: releases on aws-sdk-go-v2 (" + releases.SDKv2Releases() + ") match service IDs (EC2, Elastic Load Balancing, ...), the others endpoint IDs (ec2, elasticloadbalancing, ...)"}}
	}
	overrides := ServiceOverrides(cc.Text)
	tag := renderer.ImageTag(w.Image)
	v2, ok := releases.UsesSDKv2(tag)
	if len(overrides) == 0 || !ok {
		return nil
	}
	sdk, theirs, other := "aws-sdk-go", "endpoint IDs", "service ID"
	if v2 {
		sdk, theirs, other = "aws-sdk-go-v2", "service IDs", "endpoint ID"
	}
	has := func(name, region string) bool {
		for _, o := range overrides {
			if o.service == name && o.region == region {
				return true
			}
		}
		return false
	}
	var out []Finding
	for _, o := range overrides {
		svc, oV2, known := upstream.ServiceOfName(o.service)
		if !known || oV2 == v2 {
			continue
		}
		// The names the release matches for this service: aws-sdk-go-v2
		// tells ELB and ELBv2 apart, aws-sdk-go does not.
		var want []string
		for _, s := range upstream.AWSServices {
			if oV2 && s.ServiceID == svc.ServiceID || !oV2 && s.EndpointID == svc.EndpointID {
				name := s.EndpointID
				if v2 {
					name = s.ServiceID
				}
				if !has(name, o.region) && !slices.Contains(want, name) {
					want = append(want, name)
				}
			}
		}
		if len(want) == 0 {
			continue
		}
		out = append(out, Finding{Area: AreaWorkload, Severity: Error, Subject: subject,
			Message: fmt.Sprintf("[ServiceOverride %q] Service = %s is the %s of another SDK: CCM %s (%s) matches %s and ignores it, so its %s calls go to the public endpoint",
				o.section, o.service, other, tag, sdk, theirs, svc.ServiceID),
			Fix: fmt.Sprintf("add a section like it with Service = %s (the same Region, URL and signing settings); keep this one, which releases on the other SDK read", strings.Join(want, " and another with Service = "))})
	}
	return out
}

// cloudConfigKeysRule reports the [Global] keys of the cloud config the
// CCM's release refuses or does not read, and values it rejects
// (releases.CloudConfigKeys): a key no release reads, or one of another
// release, stops the releases that refuse unknown keys
// (releases.UnknownKeysFatal) and is ignored by the others; a value
// outside a key's accepted ones, or a pattern that is no regular
// expression, does what the key's record says.
func cloudConfigKeysRule(v *View) []Finding {
	w, cc := v.Workload, v.CloudConfig
	if w == nil || cc == nil || cc.Text == "" {
		return nil
	}
	tag := renderer.ImageTag(w.Image)
	if _, ok := minorOf(tag); !ok {
		return nil
	}
	subject := "cloud config " + cc.From
	fatal := releases.UnknownKeyFatal(tag)
	var out []Finding
	for _, sec := range IniSections(cc.Text) {
		if sec.name != "global" {
			continue
		}
		for _, name := range sec.names {
			key, known := releases.KnownKey(name)
			reads, rec := releases.ReadsKey(tag, key)
			val := sec.vars[strings.ToLower(name)]
			f := Finding{Area: AreaWorkload, Subject: subject}
			if rec != nil {
				f.Source = rec.Source
			}
			switch {
			case !known || !reads:
				what := "a key no CCM release reads"
				if known {
					what = "a key CCM " + tag + " does not read (" + readsWhen(rec) + ")"
				}
				f.Severity, f.Message = Warning, fmt.Sprintf("[Global] %s is %s: CCM %s ignores it", name, what, tag)
				f.Fix = fixUnreadKey
				if fatal {
					f.Severity = Error
					f.Message = fmt.Sprintf("[Global] %s is %s: CCM %s refuses a cloud config with a key it does not know and exits (unable to read AWS cloud provider config file)", name, what, tag)
					f.Fix = "remove it, or run a later patch of the minor, which ignores unknown keys (" + strings.Join(releases.UnknownKeysFatal, ", ") + " refuse them)"
					f.Source = "kubernetes/cloud-provider-aws pkg/providers/v1/aws.go readAWSCloudConfig (gcfg.ReadInto against gcfg.FatalOnly)"
				}
			case rec != nil && len(rec.Values) > 0 && !slices.Contains(rec.Values, val):
				f.Severity = Error
				f.Message = fmt.Sprintf("[Global] %s = %s: CCM %s accepts %s; another value: %s", key, val, tag, acceptedValues(rec.Values), rec.Bad)
				f.Fix = "set it to one of " + acceptedValues(rec.Values) + " (the names are matched with their case)"
			case rec != nil && rec.Bad != "" && key == "SupportedTopologyInstanceTypePattern":
				if _, err := regexp.Compile(val); err != nil {
					f.Severity = Error
					f.Message = fmt.Sprintf("[Global] %s = %s is no regular expression (%v): %s", key, val, err, rec.Bad)
					f.Fix = "write it as a Go regular expression (regexp syntax), or remove it for the release's default"
				}
			}
			if f.Severity != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

// readsWhen says which releases read a key.
func readsWhen(rec *releases.CloudConfigKey) string {
	switch {
	case rec == nil:
		return "no release"
	case rec.RemovedIn != "":
		return "removed in " + rec.RemovedIn
	}
	return "read from " + JoinAnd(rec.Since)
}

// acceptedValues lists a key's values for people: "" is "empty".
func acceptedValues(vals []string) string {
	var out []string
	for _, v := range vals {
		if v == "" {
			v = "empty"
		}
		out = append(out, v)
	}
	return JoinAnd(out)
}
