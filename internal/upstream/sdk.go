package upstream

// Which AWS SDK a CCM release calls AWS with, and what that changes: the
// one home of these facts (the plans' cloud config steps and check's
// reading of the cloud config and of the CCM's error events use them).
//
// A [ServiceOverride "N"] section of the cloud config names the service it
// points elsewhere. A CCM whose clients are aws-sdk-go (v1) matches the name
// against the SDK's endpoint IDs (pkg/providers/v1/config/config.go
// GetResolver: override.Service == service); one whose clients are
// aws-sdk-go-v2 against the service IDs of the v2 packages (config.go
// GetCustomEC2Resolver and its siblings: override.Service == ec2.ServiceID,
// elb.ServiceID, ...). Both compare exactly, and a name that matches nothing
// is ignored: the calls go to the public endpoint (measured with v1.26.0
// and v1.35.3, docs/dev/aws-e2e.md).

// AWSService is an AWS service the CCM calls, by each of its names.
type AWSService struct {
	// EndpointID is the name aws-sdk-go (v1) releases match.
	EndpointID string
	// ServiceID is the name aws-sdk-go-v2 releases match, and the one the
	// v2 SDK's errors name the service by ("operation error EC2: ...").
	ServiceID string
	// IAMPrefix is the service's prefix in IAM actions.
	IAMPrefix string
}

// AWSServices are the services of the CCM's [ServiceOverride] sections.
// elb and elbv2 share the endpoint ID of aws-sdk-go.
var AWSServices = []AWSService{
	{EndpointID: "ec2", ServiceID: "EC2", IAMPrefix: "ec2"},
	{EndpointID: "elasticloadbalancing", ServiceID: "Elastic Load Balancing", IAMPrefix: "elasticloadbalancing"},
	{EndpointID: "elasticloadbalancing", ServiceID: "Elastic Load Balancing v2", IAMPrefix: "elasticloadbalancing"},
	{EndpointID: "kms", ServiceID: "KMS", IAMPrefix: "kms"},
}

// ServiceOfID returns the service an aws-sdk-go-v2 service ID names.
func ServiceOfID(id string) (AWSService, bool) {
	for _, s := range AWSServices {
		if s.ServiceID == id {
			return s, true
		}
	}
	return AWSService{}, false
}

// ServiceOfName returns the service a [ServiceOverride] Service value
// names, whichever SDK's name it is, and whether it is the v2 SDK's.
func ServiceOfName(name string) (s AWSService, v2, ok bool) {
	for _, s := range AWSServices {
		switch name {
		case s.ServiceID:
			return s, true, true
		case s.EndpointID:
			return s, false, true
		}
	}
	return AWSService{}, false, false
}
