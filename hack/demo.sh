#!/usr/bin/env bash
# make demo: render the project's sample chart with the real Helm 3 CLI,
# once as it comes and once through aws-ccm-renderer for RKE2, and show what
# changed. Run from the repository root after `make build tools-helm`.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/bin}
helm=${HELM3:-$BIN/helm}
renderer=${AWS_CCM_RENDERER:-$BIN/aws-ccm-renderer}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HELM_CACHE_HOME=$work/cache HELM_CONFIG_HOME=$work/config HELM_DATA_HOME=$work/data

chart=testdata/charts/aws-ccm-sample
echo "== helm template $chart (the chart's defaults)"
"$helm" template aws-ccm "$chart" --namespace kube-system > "$work/plain.yaml"
echo "== helm template $chart --post-renderer aws-ccm-renderer --post-renderer-args=--distro=rke2"
"$helm" template aws-ccm "$chart" --namespace kube-system \
  --post-renderer "$renderer" --post-renderer-args=--distro=rke2 > "$work/rke2.yaml"
echo "== what the renderer changed"
diff -u --label chart-defaults --label rendered-for-rke2 "$work/plain.yaml" "$work/rke2.yaml" || true
echo
echo "== the same in migrate mode, for a 1.26 cluster with the CCM of 1.26, adds a LeaderMigrationConfiguration:"
"$helm" template aws-ccm "$chart" --namespace kube-system \
  --set image=registry.k8s.io/provider-aws/cloud-controller-manager:v1.26.14 \
  --post-renderer "$renderer" --post-renderer-args=--distro=rke2 --post-renderer-args=--mode=migrate \
  --post-renderer-args=--kube-version=v1.26.15 \
  | sed -n '/kind: LeaderMigrationConfiguration/,/^---/p' | sed '$d'
echo
echo "== bad input: one line on stderr, nothing on stdout, exit 1"
set +e
printf 'kind: ConfigMap\nmetadata: {name: x}\n---\nkind: [broken\n' | "$renderer" > "$work/bad.out"
rc=$?
set -e
echo "exit code $rc, $(wc -c < "$work/bad.out") bytes on stdout"
