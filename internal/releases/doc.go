package releases

import (
	"fmt"
	"slices"
	"strings"
)

// CompatibilityMarkdown writes the compatibility table of docs/compatibility.md
// from the release data: per Kubernetes minor, the CCM release to pin and
// what changes with it, then the options each release of Kubernetes and
// the distributions removed or changed.
func CompatibilityMarkdown() string {
	var b strings.Builder
	b.WriteString("| Kubernetes | CCM to pin | AWS SDK | IAM actions added | known defects |\n|---|---|---|---|---|\n")
	for _, c := range CCM {
		tag := "`" + c.Latest + "`"
		if c.Unpromoted() {
			tag += " (image promotion not yet seen)"
		}
		sdk := "aws-sdk-go v1"
		switch {
		case c.SDKv2From == 0:
			sdk = "aws-sdk-go-v2"
		case c.SDKv2From > 0:
			sdk = fmt.Sprintf("v2 from v1.%d.%d", c.Minor, c.SDKv2From)
		}
		var iam []string
		for _, a := range IAMAdded {
			if slices.Contains(IAMControlPlane(c.Latest), a.Action) && !slices.Contains(prevIAM(c.Minor), a.Action) {
				iam = append(iam, "`"+a.Action+"`")
			}
		}
		var defects []string
		for _, d := range Defects {
			for _, r := range d.Affected {
				if strings.HasPrefix(r, fmt.Sprintf("v1.%d.", c.Minor)) {
					defects = append(defects, fmt.Sprintf("%s (%s, with `%s`; fixed in %s)", d.ID, r, d.Flag, d.FixedIn))
				}
			}
		}
		fmt.Fprintf(&b, "| 1.%d | %s | %s | %s | %s |\n", c.Minor, tag, sdk, dash(strings.Join(iam, ", ")), dash(strings.Join(defects, "; ")))
	}
	b.WriteString(iamMarkdown())
	b.WriteString("\nIn-tree AWS provider: up to 1.")
	fmt.Fprintf(&b, "%d (leader migration from 1.%d). RKE1: up to 1.%d.\n", LastInTreeMinor, FirstLeaderMigrationMinor, RKELastMinor)
	b.WriteString("\n| component | option | what changed | from | fix | source |\n|---|---|---|---|---|---|\n")
	for _, c := range OptionChanges {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s |\n", c.Component, c.Option, c.Says, c.ReleasesOf(), c.Fix, c.Source)
	}
	b.WriteString("\n| cloud config key | read from | no longer read from | values | a bad value |\n|---|---|---|---|---|\n")
	for _, k := range CloudConfigKeys {
		var vals []string
		for _, v := range k.Values {
			if v != "" {
				vals = append(vals, "`"+v+"`")
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Key, dash(strings.Join(k.Since, ", ")), dash(k.RemovedIn), dash(strings.Join(vals, ", ")), dash(k.Bad))
	}
	fmt.Fprintf(&b, "\nA key a release does not read stops %s at start; every later release ignores it.\n", strings.Join(UnknownKeysFatal, ", "))
	return b.String()
}

// iamMarkdown writes, per release, how the control-plane policy the plans
// print (IAMPolicy: what the code calls) differs from the docs' policy,
// releases with the same difference in one row.
func iamMarkdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe control-plane policy the plans print holds the AWS actions each release's code calls, read from %s; "+
		"and what AWS checks for them: ", CallsSource)
	for i, d := range IAMDependencies {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "`%s` for %s (%s; %s)", d.Action, strings.Join(d.For, " and "), d.Why, d.Source)
	}
	b.WriteString(". How it differs from the policy of kubernetes/cloud-provider-aws docs/prerequisites.md at the release:\n\n")
	b.WriteString("| CCM | actions: docs, code's policy | called, not in the docs (where) | in the docs, never called |\n|---|---|---|---|\n")
	type row struct{ first, last, counts, onlyCode, onlyDocs string }
	var rows []row
	for _, tag := range CallTags() {
		code, docs := IAMDiff(tag)
		var c, d []string
		for _, x := range code {
			c = append(c, fmt.Sprintf("`%s` (%s)", x.Action, x.Site))
		}
		for _, x := range docs {
			d = append(d, "`"+x+"`")
		}
		r := row{tag, tag, fmt.Sprintf("%d, %d", len(IAMControlPlane(tag)), len(IAMPolicy(tag))), dash(strings.Join(c, ", ")), dash(strings.Join(d, ", "))}
		if n := len(rows); n > 0 && rows[n-1].counts == r.counts && rows[n-1].onlyCode == r.onlyCode && rows[n-1].onlyDocs == r.onlyDocs {
			rows[n-1].last = tag
			continue
		}
		rows = append(rows, r)
	}
	for _, r := range rows {
		tags := "`" + r.first + "`"
		if r.last != r.first {
			tags += " to `" + r.last + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", tags, r.counts, r.onlyCode, r.onlyDocs)
	}
	return b.String()
}

// prevIAM is the policy of the latest release of the minor before.
func prevIAM(minor int) []string {
	tag, ok := Latest(minor - 1)
	if !ok {
		return IAMControlPlaneBase
	}
	return IAMControlPlane(tag)
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
