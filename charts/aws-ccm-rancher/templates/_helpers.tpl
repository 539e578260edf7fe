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
{{- if semverCompare (printf ">=%s.0-0" .since) $tag }}{{ $api = . }}{{ end }}
{{- end }}
{{- if not $api }}
{{- fail (printf "mode migrate: the CCM %s has no leader migration (it came with Kubernetes 1.21): set aws-cloud-controller-manager.image.tag to the CCM release of the cluster's minor" $tag) }}
{{- end }}
{{- if and $api.featureGate (not (has "--feature-gates=ControllerManagerLeaderMigration=true" ($ccm.args | default list))) }}
{{- fail (printf "mode migrate: the CCM %s needs the feature gate for leader migration: add --feature-gates=ControllerManagerLeaderMigration=true to aws-cloud-controller-manager.args" $tag) }}
{{- end }}
{{- $api.apiVersion }}
{{- end -}}
