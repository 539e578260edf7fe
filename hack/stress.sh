#!/usr/bin/env bash
# make stress: run each e2e package STRESS_RUNS times (default 5) beside a
# CPU hog on every core; make stress-integration does the same for the root
# module's packages that run real tools (STRESS_MODULE=., the integration
# packages and the conformance table) (STRESS_HOGS busy loops, default nproc), so that a
# wait on a cache (RBAC, informers, leases, the DaemonSet controller, the
# CCM's node writes) that only holds on an idle machine fails here rather
# than once in CI. Prints the runs and failures per package, and the failed
# runs' logs under bin/stress/. Exits 1 when a run failed. Run from the
# repository root with the e2e tests' environment (make stress sets it).
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${STRESS_RUNS:-5}
hogs=${STRESS_HOGS:-$(nproc)}
module=${STRESS_MODULE:-e2e}
if [ "$module" = e2e ]; then
  pkgs=${STRESS_PKGS:-$(cd e2e && go list ./... | grep -v '/tools/' | sed 's|^github.com/aws-ccm-renderer/aws-ccm-renderer/e2e|.|')}
else
  pkgs=${STRESS_PKGS:-$(cd "$module" && go list ./integration/... ./internal/conformance/... | grep -v '/integration/\(dist\|images\)$' | sed 's|^github.com/aws-ccm-renderer/aws-ccm-renderer|.|')}
fi
out=${BIN:-$PWD/bin}/stress
mkdir -p "$out"

hog_pids=()
stop_hogs() { for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap stop_hogs EXIT INT TERM
for _ in $(seq "$hogs"); do
  (while :; do :; done) &
  hog_pids+=($!)
done
echo "stress: $runs runs of each package of $module beside $hogs busy loops ($(nproc) cores)"

failed=0
printf '%-28s %5s %8s %s\n' PACKAGE RUNS FAILURES SECONDS
for p in $pkgs; do
  # Build once; each run is the test binary alone.
  (cd "$module" && go test -c -o "$out/pkg.test" "$p") >/dev/null || { echo "stress: $p does not build"; failed=1; continue; }
  fails=0 secs=()
  for i in $(seq "$runs"); do
    start=$(date +%s)
    log="$out/$(echo "$p" | tr / _)-$i.log"
    if (cd "$module/$p" && "$out/pkg.test" -test.count=1 -test.timeout=20m) >"$log" 2>&1; then
      rm -f "$log"
    else
      fails=$((fails + 1))
    fi
    secs+=($(( $(date +%s) - start )))
  done
  [ "$fails" -eq 0 ] || failed=1
  printf '%-28s %5d %8d %s\n' "$p" "$runs" "$fails" "${secs[*]}"
done
rm -f "$out/pkg.test"
[ "$failed" -eq 0 ] || { echo "stress: failed runs' logs in $out"; exit 1; }
