{{- /*
aws-ccm-rancher.migrationAPI: the LeaderMigrationConfiguration apiVersion the
CCM's image reads, from its tag and the table in _presets.tpl. Fails for a CCM
without leader migration and for a tag that is not a version (pin a tag that
is, e.g. v1.26.1, rather than a digest).
*/ -}}
{{- define "aws-ccm-rancher.migrationAPI" -}}
{{- $ccm := index .Values "aws-cloud-controller-manager" }}
{{- $tag := ($ccm.image).tag | default "" | toString }}
{{- if not (regexMatch "^v?[0-9]+\\.[0-9]+\\.[0-9]+" $tag) }}
{{- fail (printf "mode migrate: the CCM image tag %q is not a version, and the leader migration configuration's API version depends on it: set aws-cloud-controller-manager.image.tag to the CCM release of the cluster's minor, e.g. v1.26.1" $tag) }}
{{- end }}
{{- $api := "" }}
{{- range (include "aws-ccm-rancher.migrationAPIs" . | fromYamlArray) }}
{{- if semverCompare (printf ">=%s.0-0" .since) (regexFind "^v?[0-9]+\\.[0-9]+\\.[0-9]+" $tag) }}{{ $api = . }}{{ end }}
{{- end }}
{{- if not $api }}
{{- fail (printf "mode migrate: the CCM %s has no leader migration (it came with Kubernetes 1.21): set aws-cloud-controller-manager.image.tag to the CCM release of the cluster's minor" $tag) }}
{{- end }}
{{- if and $api.featureGate (not (has "--feature-gates=ControllerManagerLeaderMigration=true" ($ccm.args | default list))) }}
{{- fail (printf "mode migrate: the CCM %s needs the feature gate for leader migration: add --feature-gates=ControllerManagerLeaderMigration=true to aws-cloud-controller-manager.args" $tag) }}
{{- end }}
{{- $api.apiVersion }}
{{- end -}}
{{- /*
aws-ccm-rancher.versionProblem: what is wrong with the CCM's version (its
image tag) for the cluster's (.Capabilities.KubeVersion: the cluster's on
install and upgrade, --kube-version's or Helm's assumption in helm template),
naming the tag to pin; empty when nothing is. In both modes a CCM of another
minor than the cluster's (the upstream chart's default tag included); in
migrate mode also a cluster without the in-tree provider. A tag that is not a
version is not judged, as the renderer does not, nor an unknown mode
(templates/validate.yaml refuses it).
*/ -}}
{{- define "aws-ccm-rancher.versionProblem" -}}
{{- $ccm := index .Values "aws-cloud-controller-manager" }}
{{- $tag := ($ccm.image).tag | default "" | toString }}
{{- $mode := .Values.mode | toString }}
{{- if and (regexMatch "^v?[0-9]+\\.[0-9]+\\.[0-9]+" $tag) (has $mode (list "install" "migrate")) }}
{{- $kube := .Capabilities.KubeVersion.Version }}
{{- $kubeMinor := (semver $kube).Minor | int }}
{{- $ccmMinor := (semver (regexFind "^v?[0-9]+\\.[0-9]+\\.[0-9]+" $tag)).Minor | int }}
{{- $last := include "aws-ccm-rancher.lastInTreeMinor" . | int }}
{{- $pin := get (include "aws-ccm-rancher.ccmReleases" . | fromYaml) (toString $kubeMinor) | default (printf "v1.%d.<patch>" $kubeMinor) }}
{{- $seen := printf "%s as Helm sees it; helm template and --dry-run without --kube-version assume one" $kube }}
{{- if and (eq $mode "migrate") (gt $kubeMinor $last) }}
{{- printf "mode migrate: the cluster is 1.%d (%s) and %s (it ends with 1.%d): set mode to install" $kubeMinor $seen (include "aws-ccm-rancher.verdict.no-in-tree" .) $last }}
{{- else if ne $ccmMinor $kubeMinor }}
{{- $verdict := include (printf "aws-ccm-rancher.verdict.skew-%s" $mode) . }}
{{- printf "mode %s: the CCM %s is 1.%d and the cluster 1.%d (%s): %s; set aws-cloud-controller-manager.image.tag to %s" $mode $tag $ccmMinor $kubeMinor $seen $verdict $pin }}
{{- end }}
{{- end }}
{{- end -}}
{{- /*
aws-ccm-rancher.checkVersions: fails with the version problem, if any,
unless allowVersionSkew (the notes then warn of it). Renders nothing.
*/ -}}
{{- define "aws-ccm-rancher.checkVersions" -}}
{{- $problem := include "aws-ccm-rancher.versionProblem" . }}
{{- if and $problem (not .Values.allowVersionSkew) }}
{{- fail (printf "%s, or allowVersionSkew to true to install it anyway" $problem) }}
{{- end }}
{{- end -}}
