package upstream

import "github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"

// The actions the newer releases added (internal/releases holds the
// policies and which release added what).
const (
	ActionDescribeAZs      = releases.ActionDescribeAZs
	ActionInstanceTopology = releases.ActionInstanceTopology
)

// IAMControlPlane returns the control-plane policy's actions of
// docs/prerequisites.md at a CCM tag, sorted.
func IAMControlPlane(tag string) []string { return releases.IAMControlPlane(tag) }

// IAMNode returns the node policy's actions, sorted.
func IAMNode() []string { return releases.IAMNode() }
