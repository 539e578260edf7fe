module github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/tools/kube126

go 1.26.0

// The tools of Kubernetes 1.26, the last release with the in-tree AWS
// provider, in one module so that the packages they share compile once:
// the control plane the leader migration runs on (1.26.5) and the AWS CCM
// of 1.26 (v1.26.0; v1.26.0 and v1.26.1 are the 1.26 releases the module
// proxy serves). The libraries they share are at the highest version
// either requires: the CCM's release requires newer ones than the control
// plane's (github.com/aws/aws-sdk-go v1.44.159, not v1.44.116), so the
// controller manager's in-tree provider links those (docs/dev/testing.md).
//
// As k8s.io/kubernetes v1.26.5's own go.mod and the CCM's (go 1.19): both
// keep the runtime defaults of their release.
godebug default=go1.19

tool (
	k8s.io/cloud-provider-aws/cmd/aws-cloud-controller-manager
	k8s.io/kubernetes/cmd/kube-apiserver
	k8s.io/kubernetes/cmd/kube-controller-manager
)

require (
	cloud.google.com/go/compute/metadata v0.2.0 // indirect
	github.com/Azure/azure-sdk-for-go v55.0.0+incompatible // indirect
	github.com/Azure/go-ansiterm v0.0.0-20210617225240-d185dfc1b5a1 // indirect
	github.com/Azure/go-autorest v14.2.0+incompatible // indirect
	github.com/Azure/go-autorest/autorest v0.11.27 // indirect
	github.com/Azure/go-autorest/autorest/adal v0.9.20 // indirect
	github.com/Azure/go-autorest/autorest/date v0.3.0 // indirect
	github.com/Azure/go-autorest/autorest/mocks v0.4.2 // indirect
	github.com/Azure/go-autorest/autorest/to v0.4.0 // indirect
	github.com/Azure/go-autorest/autorest/validation v0.1.0 // indirect
	github.com/Azure/go-autorest/logger v0.2.1 // indirect
	github.com/Azure/go-autorest/tracing v0.6.0 // indirect
	github.com/GoogleCloudPlatform/k8s-cloud-provider v1.18.1-0.20220218231025-f11817397a1b // indirect
	github.com/NYTimes/gziphandler v1.1.1 // indirect
	github.com/antlr/antlr4/runtime/Go/antlr v1.4.10 // indirect
	github.com/asaskevich/govalidator v0.0.0-20190424111038-f61b66f89f4a // indirect
	github.com/aws/aws-sdk-go v1.44.159 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/blang/semver/v4 v4.0.0 // indirect
	github.com/cenkalti/backoff/v4 v4.2.0 // indirect
	github.com/cespare/xxhash/v2 v2.2.0 // indirect
	github.com/container-storage-interface/spec v1.7.0 // indirect
	github.com/coreos/go-oidc v2.1.0+incompatible // indirect
	github.com/coreos/go-semver v0.3.0 // indirect
	github.com/coreos/go-systemd/v22 v22.5.0 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/docker/distribution v2.8.1+incompatible // indirect
	github.com/emicklei/go-restful/v3 v3.10.1 // indirect
	github.com/evanphx/json-patch v5.6.0+incompatible // indirect
	github.com/felixge/httpsnoop v1.0.3 // indirect
	github.com/fsnotify/fsnotify v1.6.0 // indirect
	github.com/go-logr/logr v1.2.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-logr/zapr v1.2.3 // indirect
	github.com/go-openapi/jsonpointer v0.19.5 // indirect
	github.com/go-openapi/jsonreference v0.20.0 // indirect
	github.com/go-openapi/swag v0.22.3 // indirect
	github.com/gofrs/uuid v4.0.0+incompatible // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang-jwt/jwt/v4 v4.2.0 // indirect
	github.com/golang/groupcache v0.0.0-20210331224755-41bb18bfe9da // indirect
	github.com/golang/mock v1.6.0 // indirect
	github.com/golang/protobuf v1.5.2 // indirect
	github.com/google/cel-go v0.13.0 // indirect
	github.com/google/gnostic v0.6.9 // indirect
	github.com/google/go-cmp v0.5.9 // indirect
	github.com/google/gofuzz v1.2.0 // indirect
	github.com/google/uuid v1.3.0 // indirect
	github.com/googleapis/enterprise-certificate-proxy v0.2.0 // indirect
	github.com/googleapis/gax-go/v2 v2.6.0 // indirect
	github.com/grpc-ecosystem/go-grpc-prometheus v1.2.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.14.0 // indirect
	github.com/imdario/mergo v0.3.13 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jmespath/go-jmespath v0.4.0 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/libopenstorage/openstorage v1.0.0 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/matttproud/golang_protobuf_extensions v1.0.4 // indirect
	github.com/mitchellh/mapstructure v1.4.1 // indirect
	github.com/moby/spdystream v0.2.0 // indirect
	github.com/moby/sys/mountinfo v0.6.2 // indirect
	github.com/moby/term v0.0.0-20221205130635-1aeaba878587 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/mohae/deepcopy v0.0.0-20170603005431-491d3605edfb // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/mxk/go-flowrate v0.0.0-20140419014527-cca7078d478f // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/selinux v1.10.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/pquerna/cachecontrol v0.1.0 // indirect
	github.com/prometheus/client_golang v1.14.0 // indirect
	github.com/prometheus/client_model v0.3.0 // indirect
	github.com/prometheus/common v0.39.0 // indirect
	github.com/prometheus/procfs v0.8.0 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/rubiojr/go-vhd v0.0.0-20200706105327-02e210299021 // indirect
	github.com/spf13/cobra v1.6.1 // indirect
	github.com/spf13/pflag v1.0.5 // indirect
	github.com/stoewer/go-strcase v1.2.0 // indirect
	github.com/stretchr/objx v0.5.0 // indirect
	github.com/stretchr/testify v1.8.1 // indirect
	github.com/vmware/govmomi v0.20.3 // indirect
	go.etcd.io/etcd/api/v3 v3.5.6 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.5.6 // indirect
	go.etcd.io/etcd/client/v3 v3.5.6 // indirect
	go.opencensus.io v0.23.0 // indirect
	go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc v0.37.0 // indirect
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.37.0 // indirect
	go.opentelemetry.io/otel v1.11.2 // indirect
	go.opentelemetry.io/otel/exporters/otlp/internal/retry v1.11.2 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.11.2 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.11.2 // indirect
	go.opentelemetry.io/otel/metric v0.34.0 // indirect
	go.opentelemetry.io/otel/sdk v1.11.2 // indirect
	go.opentelemetry.io/otel/trace v1.11.2 // indirect
	go.opentelemetry.io/proto/otlp v0.19.0 // indirect
	go.uber.org/atomic v1.10.0 // indirect
	go.uber.org/multierr v1.9.0 // indirect
	go.uber.org/zap v1.24.0 // indirect
	golang.org/x/crypto v0.4.0 // indirect
	golang.org/x/net v0.8.0 // indirect
	golang.org/x/oauth2 v0.3.0 // indirect
	golang.org/x/sync v0.1.0 // indirect
	golang.org/x/sys v0.6.0 // indirect
	golang.org/x/term v0.6.0 // indirect
	golang.org/x/text v0.8.0 // indirect
	golang.org/x/time v0.3.0 // indirect
	golang.org/x/tools v0.6.0 // indirect
	google.golang.org/api v0.100.0 // indirect
	google.golang.org/appengine v1.6.7 // indirect
	google.golang.org/genproto v0.0.0-20221207170731-23e4bf6bdc37 // indirect
	google.golang.org/grpc v1.51.0 // indirect
	google.golang.org/protobuf v1.28.1 // indirect
	gopkg.in/gcfg.v1 v1.2.3 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.0.0 // indirect
	gopkg.in/square/go-jose.v2 v2.2.2 // indirect
	gopkg.in/warnings.v0 v0.1.2 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	k8s.io/api v0.26.5 // indirect
	k8s.io/apiextensions-apiserver v0.0.0 // indirect
	k8s.io/apimachinery v0.26.5 // indirect
	k8s.io/apiserver v0.26.5 // indirect
	k8s.io/client-go v0.26.5 // indirect
	k8s.io/cloud-provider v0.26.5 // indirect
	k8s.io/cloud-provider-aws v1.26.0 // indirect
	k8s.io/cluster-bootstrap v0.0.0 // indirect
	k8s.io/component-base v0.26.5 // indirect
	k8s.io/component-helpers v0.26.5 // indirect
	k8s.io/controller-manager v0.26.5 // indirect
	k8s.io/cri-api v0.0.0 // indirect
	k8s.io/csi-translation-lib v0.26.5 // indirect
	k8s.io/dynamic-resource-allocation v0.0.0 // indirect
	k8s.io/klog/v2 v2.80.1 // indirect
	k8s.io/kms v0.26.5 // indirect
	k8s.io/kube-aggregator v0.0.0 // indirect
	k8s.io/kube-controller-manager v0.0.0 // indirect
	k8s.io/kube-openapi v0.0.0-20221207184640-f3cff1453715 // indirect
	k8s.io/kubectl v0.0.0 // indirect
	k8s.io/kubelet v0.26.5 // indirect
	k8s.io/kubernetes v1.26.5 // indirect
	k8s.io/legacy-cloud-providers v0.0.0 // indirect
	k8s.io/metrics v0.26.5 // indirect
	k8s.io/mount-utils v0.0.0 // indirect
	k8s.io/pod-security-admission v0.0.0 // indirect
	k8s.io/utils v0.0.0-20221128185143-99ec85e7a448 // indirect
	sigs.k8s.io/apiserver-network-proxy/konnectivity-client v0.0.37 // indirect
	sigs.k8s.io/json v0.0.0-20221116044647-bc3834ca7abd // indirect
	sigs.k8s.io/structured-merge-diff/v4 v4.2.3 // indirect
	sigs.k8s.io/yaml v1.3.0 // indirect
)

// k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them
// with ./staging; outside its tree each must be pinned to the release that
// matches it, v0.26.5 for v1.26.5. The last 1.26 patch, v1.26.15, cannot be
// built so: the module proxy refuses k8s.io/controller-manager v0.26.15.
replace (
	k8s.io/api => k8s.io/api v0.26.5
	k8s.io/apiextensions-apiserver => k8s.io/apiextensions-apiserver v0.26.5
	k8s.io/apimachinery => k8s.io/apimachinery v0.26.5
	k8s.io/apiserver => k8s.io/apiserver v0.26.5
	k8s.io/cli-runtime => k8s.io/cli-runtime v0.26.5
	k8s.io/client-go => k8s.io/client-go v0.26.5
	k8s.io/cloud-provider => k8s.io/cloud-provider v0.26.5
	k8s.io/cluster-bootstrap => k8s.io/cluster-bootstrap v0.26.5
	k8s.io/code-generator => k8s.io/code-generator v0.26.5
	k8s.io/component-base => k8s.io/component-base v0.26.5
	k8s.io/component-helpers => k8s.io/component-helpers v0.26.5
	k8s.io/controller-manager => k8s.io/controller-manager v0.26.5
	k8s.io/cri-api => k8s.io/cri-api v0.26.5
	k8s.io/csi-translation-lib => k8s.io/csi-translation-lib v0.26.5
	k8s.io/dynamic-resource-allocation => k8s.io/dynamic-resource-allocation v0.26.5
	k8s.io/kms => k8s.io/kms v0.26.5
	k8s.io/kube-aggregator => k8s.io/kube-aggregator v0.26.5
	k8s.io/kube-controller-manager => k8s.io/kube-controller-manager v0.26.5
	k8s.io/kube-proxy => k8s.io/kube-proxy v0.26.5
	k8s.io/kube-scheduler => k8s.io/kube-scheduler v0.26.5
	k8s.io/kubectl => k8s.io/kubectl v0.26.5
	k8s.io/kubelet => k8s.io/kubelet v0.26.5
	k8s.io/legacy-cloud-providers => k8s.io/legacy-cloud-providers v0.26.5
	k8s.io/metrics => k8s.io/metrics v0.26.5
	k8s.io/mount-utils => k8s.io/mount-utils v0.26.5
	k8s.io/pod-security-admission => k8s.io/pod-security-admission v0.26.5
	k8s.io/sample-apiserver => k8s.io/sample-apiserver v0.26.5
	k8s.io/sample-cli-plugin => k8s.io/sample-cli-plugin v0.26.5
	k8s.io/sample-controller => k8s.io/sample-controller v0.26.5
)
