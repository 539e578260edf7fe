// Command argocd-cmp-client does, for one request, what Argo CD's repo
// server does with a config management plugin, with the repo server's own
// code from the Argo CD module this tool module pins: the tests run it
// against a running argocd-cmp-server, on the sockets in
// $ARGOCD_PLUGINSOCKFILEPATH as the repo server finds them.
//
//	argocd-cmp-client generate APP_PATH REPO_ROOT < REQUEST
//	argocd-cmp-client detect APP_PATH REPO_ROOT < REQUEST
//	argocd-cmp-client app-type APP_PATH REPO_ROOT < REQUEST
//	argocd-cmp-client parameters APP_PATH REPO_ROOT < REQUEST
//
// REQUEST is the repo server's ManifestRequest as JSON (reposerver/apiclient:
// appName, namespace, repo, applicationSource as in an Application's
// spec.source, kubeVersion, apiVersions, appLabelKey, trackingMethod).
// APP_PATH is the Application's source directory in the checkout REPO_ROOT.
//
//   - generate: the repo server's GenerateManifests
//     (reposerver/repository), which works out the source's type, the
//     plugin's environment (newEnv, getPluginEnvs), finds the plugin
//     (util/app/discovery.DetectConfigManagementPlugin), streams the source
//     to it (util/cmp.SendRepoStream) and adds Argo CD's tracking to the
//     objects. Prints the ManifestResponse.
//   - detect: DetectConfigManagementPlugin for the source's plugin name
//     (none: every socket, as for an Application that names no plugin),
//     then the found plugin's CheckPluginConfiguration, whose fields it
//     prints (isDiscoveryConfigured, provideGitCreds).
//   - app-type: the type the repo server gives a source that names no
//     plugin (util/app/discovery.AppType): Plugin when a plugin's discovery
//     rule matches, else Helm, Kustomize or Directory.
//   - parameters: what the repo server's GetAppDetails returns to the UI for
//     a plugin source (RepoAppDetailsResponse.plugin): its
//     populatePluginAppDetails, which is unexported at v2.14.21, mirrored in
//     pluginAppDetails below.
//
// A result is JSON on stdout, exit 0. When the repo server's code returns an
// error, it is printed as {"error": "..."} on stdout, exit 3: the text the
// repo server returns, which Argo CD shows in the Application's conditions.
// A usage error: one line on stderr, exit 1. Argo CD's log lines go to
// stderr.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/golang/protobuf/ptypes/empty"
	grpc_retry "github.com/grpc-ecosystem/go-grpc-middleware/retry"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v2/reposerver/apiclient"
	"github.com/argoproj/argo-cd/v2/reposerver/repository"
	"github.com/argoproj/argo-cd/v2/util/app/discovery"
	"github.com/argoproj/argo-cd/v2/util/cmp"
	argoio "github.com/argoproj/argo-cd/v2/util/io"
)

const usage = "usage: argocd-cmp-client generate|detect|app-type|parameters APP_PATH REPO_ROOT < MANIFEST_REQUEST_JSON"

// timeout bounds one request, as the repo server's exec timeout does (90 s
// by default).
const timeout = 90 * time.Second

// maxManifests is the repo server's default limit on the size of the
// manifests of one Application (--max-combined-directory-manifests-size).
var maxManifests = resource.MustParse("10M")

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(1)
	}
	op, appPath, repoRoot := os.Args[1], os.Args[2], os.Args[3]
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd-cmp-client: reading the request:", err)
		os.Exit(1)
	}
	var q apiclient.ManifestRequest
	if err := json.Unmarshal(in, &q); err != nil {
		fmt.Fprintln(os.Stderr, "argocd-cmp-client: the request is no ManifestRequest:", err)
		os.Exit(1)
	}
	if q.ApplicationSource == nil {
		fmt.Fprintln(os.Stderr, "argocd-cmp-client: the request has no applicationSource")
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	var result any
	switch op {
	case "generate":
		result, err = repository.GenerateManifests(ctx, appPath, repoRoot, q.Revision, &q, false, nil, maxManifests,
			argoio.NewRandomizedTempPaths(os.TempDir()))
	case "detect":
		result, err = detect(ctx, appPath, repoRoot, &q)
	case "app-type":
		var t string
		t, err = discovery.AppType(ctx, appPath, repoRoot, q.EnabledSourceTypes, nil, nil)
		result = map[string]string{"type": t}
	case "parameters":
		result, err = pluginAppDetails(ctx, appPath, repoRoot, &apiclient.RepoServerAppDetailsQuery{
			Repo: q.Repo, Source: q.ApplicationSource, AppName: q.AppName,
		})
	default:
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(1)
	}
	code := 0
	if err != nil {
		result, code = map[string]string{"error": err.Error()}, 3
	}
	out, merr := json.Marshal(result)
	if merr != nil {
		fmt.Fprintln(os.Stderr, "argocd-cmp-client:", merr)
		os.Exit(1)
	}
	fmt.Println(string(out))
	os.Exit(code)
}

// detect finds the source's plugin as the repo server does, and asks it for
// its configuration.
func detect(ctx context.Context, appPath, repoRoot string, q *apiclient.ManifestRequest) (any, error) {
	name := ""
	if q.ApplicationSource.Plugin != nil {
		name = q.ApplicationSource.Plugin.Name
	}
	conn, client, err := discovery.DetectConfigManagementPlugin(ctx, appPath, repoRoot, name, nil, nil)
	if err != nil {
		return nil, err
	}
	defer argoio.Close(conn)
	cfg, err := client.CheckPluginConfiguration(ctx, &empty.Empty{})
	if err != nil {
		return nil, err
	}
	// Both fields, false ones too (the message's JSON omits them).
	return map[string]bool{"isDiscoveryConfigured": cfg.IsDiscoveryConfigured, "provideGitCreds": cfg.ProvideGitCreds}, nil
}

// pluginAppDetails mirrors the repo server's populatePluginAppDetails
// (reposerver/repository/repository.go at v2.14.21), which GetAppDetails
// calls for a plugin source and which is unexported: the environment of
// getPluginParamEnvs (also unexported, mirrored in pluginParamEnv), the
// plugin found by DetectConfigManagementPlugin, the source streamed to its
// GetParametersAnnouncement.
func pluginAppDetails(ctx context.Context, appPath, repoRoot string, q *apiclient.RepoServerAppDetailsQuery) (*apiclient.PluginAppSpec, error) {
	repoURL := ""
	if q.Repo != nil {
		repoURL = q.Repo.Repo
	}
	env, err := pluginParamEnv([]string{
		"ARGOCD_APP_NAME=" + q.AppName,
		"ARGOCD_APP_SOURCE_REPO_URL=" + repoURL,
		"ARGOCD_APP_SOURCE_PATH=" + q.Source.Path,
		"ARGOCD_APP_SOURCE_TARGET_REVISION=" + q.Source.TargetRevision,
	}, q.Source.Plugin)
	if err != nil {
		return nil, fmt.Errorf("failed to get env vars for plugin: %w", err)
	}
	name := ""
	if q.Source.Plugin != nil {
		name = q.Source.Plugin.Name
	}
	conn, client, err := discovery.DetectConfigManagementPlugin(ctx, appPath, repoRoot, name, env, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to detect CMP for app: %w", err)
	}
	defer argoio.Close(conn)
	stream, err := client.GetParametersAnnouncement(ctx, grpc_retry.Disable())
	if err != nil {
		return nil, fmt.Errorf("error getting parametersAnnouncementStream: %w", err)
	}
	if err := cmp.SendRepoStream(stream.Context(), appPath, repoRoot, stream, env, nil); err != nil {
		return nil, fmt.Errorf("error sending file to cmp-server: %w", err)
	}
	announcement, err := stream.CloseAndRecv()
	if err != nil {
		return nil, fmt.Errorf("failed to get parameter announcement: %w", err)
	}
	return &apiclient.PluginAppSpec{ParametersAnnouncement: announcement.ParameterAnnouncements}, nil
}

// pluginParamEnv mirrors the repo server's getPluginParamEnvs at v2.14.21:
// the plugin env, each value expanded against env, as ARGOCD_ENV_<NAME>,
// and the parameters as Argo CD's ApplicationSourcePluginParameters.Environ
// writes them.
func pluginParamEnv(env []string, plugin *v1alpha1.ApplicationSourcePlugin) ([]string, error) {
	parsed := make(v1alpha1.Env, len(env))
	for i, v := range env {
		e, err := v1alpha1.NewEnvEntry(v)
		if err != nil {
			return nil, errors.New("failed to parse env vars")
		}
		parsed[i] = e
	}
	if plugin == nil {
		return env, nil
	}
	for _, e := range plugin.Env {
		env = append(env, fmt.Sprintf("ARGOCD_ENV_%s=%s", e.Name, parsed.Envsubst(e.Value)))
	}
	params, err := plugin.Parameters.Environ()
	if err != nil {
		return nil, fmt.Errorf("failed to generate env vars from parameters: %w", err)
	}
	return append(env, params...), nil
}
