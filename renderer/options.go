package renderer

import "github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"

// The renderer's options: Options, its fields' named values (the modes, the
// token scopes, the leader migration config's sources, the lease's and the
// in-tree controller manager's defaults) and DefaultOptions. How the front
// ends spell and set them is in optiontable.go, the config file in
// config.go, their checks in validate.go.

// Mode says where the cluster is in its move to the external cloud provider.
type Mode string

const (
	// ModeInstall: the CCM is the only cloud controller (fresh install, or
	// after a migration). Leader migration is switched off.
	ModeInstall Mode = "install"
	// ModeMigrate: the in-tree kube-controller-manager may still run its
	// cloud controllers; leader migration hands them over one at a time.
	ModeMigrate Mode = "migrate"
)

// Modes lists every accepted --mode value.
var Modes = []Mode{ModeInstall, ModeMigrate}

// ModesOf returns the modes a distribution has: install, and migrate
// unless it has no in-tree provider.
func ModesOf(p distros.Record) []Mode {
	if p.NoInTreeProvider {
		return []Mode{ModeInstall}
	}
	return Modes
}

// Leader migration configuration sources.
const (
	// LeaderMigrationRendered ships an explicit LeaderMigrationConfiguration
	// naming the CCM's controllers (current and pre-1.28 names).
	LeaderMigrationRendered = "rendered"
	// LeaderMigrationDefault relies on the CCM's built-in default, whose
	// controller names do not match a CCM built on Kubernetes >= 1.28
	// libraries: its service controller then starts outside the lock.
	LeaderMigrationDefault = "default"

	// DefaultLeaderName is the lease the in-tree kube-controller-manager and
	// the CCM share during a migration.
	DefaultLeaderName = "cloud-provider-extraction-migration"

	// DefaultKCMUser is the identity the in-tree kube-controller-manager
	// authenticates as on every distribution with an in-tree provider.
	DefaultKCMUser = "system:kube-controller-manager"
)

// Options select what the renderer writes. The zero value is not valid; start
// from DefaultOptions.
type Options struct {
	Distro      distros.Distro `yaml:"distro,omitempty" json:"distro,omitempty"`
	Mode        Mode           `yaml:"mode,omitempty" json:"mode,omitempty"`
	HostNetwork *bool          `yaml:"hostNetwork,omitempty" json:"hostNetwork,omitempty"`
	// SetArgs are "FLAG=VALUE" pairs merged into the CCM's command line by
	// flag name ("v=4" and "--v=4" are the same).
	SetArgs []string `yaml:"setArgs,omitempty" json:"setArgs,omitempty"`
	// RemoveArgs are flag names removed from the CCM's command line.
	RemoveArgs []string `yaml:"removeArgs,omitempty" json:"removeArgs,omitempty"`
	// AllowMissingWorkload passes input without a CCM workload through
	// unchanged instead of failing.
	AllowMissingWorkload bool `yaml:"allowMissingWorkload,omitempty" json:"allowMissingWorkload,omitempty"`
	// LeaderMigrationConfig is "rendered" (default) or "default"; only used
	// in migrate mode.
	LeaderMigrationConfig string `yaml:"leaderMigrationConfig,omitempty" json:"leaderMigrationConfig,omitempty"`
	// LeaderName is the migration lease's name.
	LeaderName string `yaml:"leaderName,omitempty" json:"leaderName,omitempty"`
	// Target names the CCM's workload, KIND/NAMESPACE/NAME (or KIND/NAME),
	// for builds the renderer does not recognise by binary or image.
	Target string `yaml:"target,omitempty" json:"target,omitempty"`
	// KCMUser is the identity of the in-tree kube-controller-manager, which
	// migrate mode lets hold the migration lease.
	KCMUser string `yaml:"kcmUser,omitempty" json:"kcmUser,omitempty"`
	// KubeVersion is the cluster's Kubernetes version, when known: the CCM's
	// version is checked against it.
	KubeVersion string `yaml:"kubeVersion,omitempty" json:"kubeVersion,omitempty"`
	// CCMVersion is the CCM's version when its image tag does not tell
	// (an untagged or digest-pinned image).
	CCMVersion string `yaml:"ccmVersion,omitempty" json:"ccmVersion,omitempty"`
	// AllowVersionSkew lets migrate mode render, with a warning, what the
	// version check refuses: a CCM of another minor than the cluster's, a
	// CCM of 1.27 or later when the cluster's version is not known, a
	// cluster with no in-tree provider.
	AllowVersionSkew bool `yaml:"allowVersionSkew,omitempty" json:"allowVersionSkew,omitempty"`
	// Strict makes every warning an error: where nobody reads a
	// post-renderer's stderr (Helm without a terminal, GitOps controllers),
	// a render that would warn fails instead, saying why.
	Strict bool `yaml:"strict,omitempty" json:"strict,omitempty"`
	// TokenScope says for which service accounts the CCM's own may create
	// tokens: TokenScopeCluster (or empty) leaves the chart's grant,
	// TokenScopeControllers narrows it.
	TokenScope TokenScope `yaml:"tokenScope,omitempty" json:"tokenScope,omitempty"`
	// GuardImage, when set, adds the guard (aws-ccm-renderer guard) as an
	// init container of the CCM's pods, from this image, pinned by digest,
	// with a Role for what it reads (Guard, GuardRBAC).
	GuardImage string `yaml:"guardImage,omitempty" json:"guardImage,omitempty"`
}

// TokenScope is how far the CCM's service account may create tokens.
type TokenScope string

const (
	// TokenScopeCluster: as the chart grants it, for any service account in
	// any namespace (the default).
	TokenScopeCluster TokenScope = "cluster"
	// TokenScopeControllers: for its controllers' service accounts in
	// kube-system alone (ControllerAccounts), by name, through a Role there
	// (TokenRBAC); the CCM's own roles lose their wider grant. A wider grant
	// in a role the renderer may not edit (shared, aggregated, not in the
	// input) is an error.
	TokenScopeControllers TokenScope = "controllers"
)

// TokenScopes lists every accepted token scope.
var TokenScopes = []TokenScope{TokenScopeCluster, TokenScopeControllers}

// narrow reports whether the options narrow the token grant.
func (o Options) narrow() bool { return o.TokenScope == TokenScopeControllers }

// DefaultOptions returns the defaults of the command line.
func DefaultOptions() Options {
	t := true
	return Options{
		Distro:                distros.Auto,
		Mode:                  ModeInstall,
		HostNetwork:           &t,
		LeaderMigrationConfig: LeaderMigrationRendered,
		LeaderName:            DefaultLeaderName,
		KCMUser:               DefaultKCMUser,
	}
}
