// Package awscheck is the AWS side of check (check --aws): what the
// account the cluster runs in holds for the CCM, read with Describe, Get
// and List calls and iam:SimulatePrincipalPolicy only, into plain data
// (check.AWSAccount) its rules judge, so that a test writes an account as
// a literal, as recorded API answers. Each area is one file, its reads
// beside its rule: account.go, instance.go, clusterid.go,
// securitygroup.go, subnet.go, iam.go, metadata.go, loadbalancer.go; this
// file holds the reader and the view the rules share. The rules' names,
// areas, symptoms and fixes are check.Rules'; Side gives the reads and the
// rules to the command that assembles check (check.Input.AWSSide).
//
// The CCM's rules these carry over were read in k8s.io/cloud-provider-aws
// at v1.26.0 and v1.35.3 (pkg/providers/v1): the node lookup
// (instances.go MapToAWSInstanceID, aws.go getInstanceByNodeName), the
// cluster tags (tags.go), the security group per instance
// (findSecurityGroupForInstance), the subnets of a load balancer
// (findSubnets, findELBSubnets, isSubnetPublic), the load balancer's name
// and tags (aws_loadbalancer.go, cloudprovider.DefaultLoadBalancerName).
package awscheck

import (
	"context"
	"errors"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/kubeversion"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/reach"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
)

// What bounds check's AWS reads: filter values per DescribeInstances call
// (EC2 takes 200 values per filter), names per ELB DescribeTags (20), the
// reads in flight at once, and the SDK's retries of a throttled call
// (standard backoff, at most awsMaxBackoff between tries).
const (
	awsFilterValues = 200
	awsTagBatch     = 20
	awsParallel     = 4
	awsMaxAttempts  = 5
	awsMaxBackoff   = 4 * time.Second
)

// awsReader reads one account into s.AWS.
type awsReader struct {
	s     *check.Snapshot
	acct  *check.AWSAccount
	ec2   *ec2.Client
	elb   *elb.Client
	elbv2 *elbv2.Client
	iam   *iam.Client
	sts   *sts.Client
	mu    sync.Mutex
	// fatal is set by a read whose failure no other read can outlive:
	// credentials refused or expired.
	fatal error
	// vpcIDs are the instances' VPCs, once the instances are read.
	vpcIDs []string
	reads  int // successful reads
}

// collect reads the account the cluster's nodes run in.
func collect(ctx context.Context, s *check.Snapshot) error {
	if s.AWSOptions == nil {
		return nil
	}
	o := s.AWSOptions
	acct := &check.AWSAccount{Region: o.Region, RegionFrom: "flag", Calls: map[string]int{}, Instances: []check.AWSInstance{},
		VPCs: []check.AWSVPC{}, Subnets: []check.AWSSubnet{}, SecurityGroups: []check.AWSSecurityGroup{}, RouteTables: []check.AWSRouteTable{},
		Profiles: []check.AWSInstanceProfile{}, Simulations: []check.AWSSimulation{}, LoadBalancers: []check.AWSLoadBalancer{}}
	if acct.Region == "" {
		acct.Region, acct.RegionFrom = check.ClusterRegion(s.Nodes), "nodes"
	}
	opts := []func(*config.LoadOptions) error{
		// What goes wrong is said in findings; the SDK's own log lines
		// would only interleave with them on stderr.
		config.WithLogger(logging.Nop{}),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts, so.MaxBackoff = awsMaxAttempts, awsMaxBackoff
			})
		}),
	}
	if o.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(o.Profile))
	}
	if acct.Region != "" {
		opts = append(opts, config.WithRegion(acct.Region))
	}
	if err := checkSharedFiles(); err != nil {
		return &check.AWSError{Msg: "loading the AWS configuration: " + err.Error()}
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return &check.AWSError{Msg: "loading the AWS configuration: " + oneLine(err.Error()) + profileHint(o.Profile)}
	}
	if acct.Region == "" {
		acct.Region, acct.RegionFrom = cfg.Region, "sdk"
	}
	if acct.Region == "" {
		return &check.AWSError{Msg: "no region: the nodes show none (no aws:///ZONE/ providerID, topology.kubernetes.io/region label or EC2 node name); give --aws-region, or set AWS_REGION or the profile's region"}
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return &check.AWSError{Msg: "no AWS credentials: " + credentialsError(err) + "; check reads them as the AWS CLI does (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, --aws-profile or AWS_PROFILE, SSO, web identity, instance metadata)" + profileHint(o.Profile)}
	}
	r := &awsReader{s: s, acct: acct}
	acct.Endpoints = r.clients(cfg)
	s.AWS = acct

	r.callerIdentity(ctx)
	if r.fatal != nil {
		return r.fatal
	}
	r.instances(ctx)
	if r.fatal != nil {
		return r.fatal
	}
	for _, in := range acct.Instances {
		if in.VPC != "" {
			r.vpcIDs = append(r.vpcIDs, in.VPC)
		}
	}
	r.vpcIDs = slices.Compact(slices.Sorted(slices.Values(r.vpcIDs)))
	var wg sync.WaitGroup
	sem := make(chan struct{}, awsParallel)
	for _, read := range []func(context.Context){r.vpcs, r.subnets, r.securityGroups, r.routeTables, r.zones, r.principals, r.classicELBs, r.elbv2s} {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			read(ctx)
		})
	}
	wg.Wait()
	if r.fatal != nil {
		return r.fatal
	}
	if r.reads == 0 && len(acct.Unread) > 0 {
		u := acct.Unread[0]
		return &check.AWSError{Msg: "nothing could be read: " + u.Action + ": " + u.Message}
	}
	sortAccount(acct)
	return nil
}

// clients makes the service clients: endpoints from the SDK's own
// settings (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>, the profile's
// services), and, where the CCM's cloud config names one for a service in
// this region, that endpoint, so that check asks what the CCM asks. It
// returns the endpoints that are not AWS's own.
func (r *awsReader) clients(cfg aws.Config) map[string]string {
	eps := map[string]string{}
	override := map[string]string{}
	if cc := r.s.CloudConfig; cc != nil {
		for _, o := range check.ServiceOverrides(cc.Text) {
			svc, _, known := upstream.ServiceOfName(o.Service())
			if !known || o.URL() == "" || (o.Region() != "" && o.Region() != r.acct.Region) {
				continue
			}
			override[svc.ServiceID] = o.URL()
		}
	}
	base := func(serviceID, envName string) *string {
		if u, ok := override[serviceID]; ok {
			eps[serviceID] = u + " (cloud config)"
			return aws.String(u)
		}
		for _, v := range []string{"AWS_ENDPOINT_URL_" + envName, "AWS_ENDPOINT_URL"} {
			if u := os.Getenv(v); u != "" {
				eps[serviceID] = u + " ($" + v + ")"
				break
			}
		}
		return nil // the SDK resolves it, with the settings above
	}
	if u := base("EC2", "EC2"); u != nil {
		r.ec2 = ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = u })
	} else {
		r.ec2 = ec2.NewFromConfig(cfg)
	}
	if u := base("Elastic Load Balancing", "ELASTIC_LOAD_BALANCING"); u != nil {
		r.elb = elb.NewFromConfig(cfg, func(o *elb.Options) { o.BaseEndpoint = u })
	} else {
		r.elb = elb.NewFromConfig(cfg)
	}
	if u := base("Elastic Load Balancing v2", "ELASTIC_LOAD_BALANCING_V2"); u != nil {
		r.elbv2 = elbv2.NewFromConfig(cfg, func(o *elbv2.Options) { o.BaseEndpoint = u })
	} else {
		r.elbv2 = elbv2.NewFromConfig(cfg)
	}
	if u := base("IAM", "IAM"); u != nil {
		r.iam = iam.NewFromConfig(cfg, func(o *iam.Options) { o.BaseEndpoint = u })
	} else {
		r.iam = iam.NewFromConfig(cfg)
	}
	if u := base("STS", "STS"); u != nil {
		r.sts = sts.NewFromConfig(cfg, func(o *sts.Options) { o.BaseEndpoint = u })
	} else {
		r.sts = sts.NewFromConfig(cfg)
	}
	if len(eps) == 0 {
		return nil
	}
	return eps
}

// done records one call's outcome: a success, or what the area could not
// read and why. It returns whether the call succeeded.
func (r *awsReader) done(area, action string, err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acct.Calls[action]++
	if err == nil {
		r.reads++
		return true
	}
	u := check.AWSUnread{Area: area, Action: action}
	var api smithy.APIError
	switch {
	case errors.As(err, &api):
		u.Code, u.Message = api.ErrorCode(), oneLine(api.ErrorMessage())
		u.Denied = deniedCodes[u.Code]
		if credentialCodes[u.Code] && r.fatal == nil {
			r.fatal = &check.AWSError{Msg: action + ": " + u.Code + ": " + u.Message + ": renew the credentials (a new session token, aws sso login, or another profile)"}
		}
	case reach.Unreachable(err):
		u.Message = "no answer: " + unreachableError(err)
	default:
		u.Message = oneLine(err.Error())
	}
	if u.Message == "" {
		u.Message = u.Code
	}
	r.acct.Unread = append(r.acct.Unread, u)
	return false
}

var (
	// deniedCodes are the codes of an IAM refusal.
	deniedCodes = map[string]bool{"UnauthorizedOperation": true, "AccessDenied": true, "AccessDeniedException": true, "UnauthorizedAccess": true}
	// credentialCodes are the codes of credentials AWS does not take.
	credentialCodes = map[string]bool{"ExpiredToken": true, "ExpiredTokenException": true, "RequestExpired": true, "InvalidClientTokenId": true,
		"UnrecognizedClientException": true, "AuthFailure": true, "SignatureDoesNotMatch": true, "InvalidAccessKeyId": true}
)

// unreachableError says which endpoint did not answer, without the Go
// error chain's types.
func unreachableError(err error) string {
	var oe *smithy.OperationError
	msg := err.Error()
	if errors.As(err, &oe) {
		msg = oe.Err.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "it did not answer in time (--timeout)"
	}
	return oneLine(msg)
}

// credentialsError says why the SDK found no credentials, in one line.
func credentialsError(err error) string {
	msg := oneLine(err.Error())
	if i := strings.LastIndex(msg, ", "); i > 0 && strings.Contains(msg, "failed to refresh cached credentials") {
		msg = strings.TrimSpace(msg[i+2:])
	}
	return msg
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ec2Pager is an EC2 paginator of the SDK.
type ec2Pager[P any] interface {
	HasMorePages() bool
	NextPage(context.Context, ...func(*ec2.Options)) (P, error)
}

// ec2Pages reads every page of an EC2 paginator, handing each to each and
// recording every call; false when one failed (what was read is dropped).
func ec2Pages[P any](ctx context.Context, r *awsReader, area, action string, p ec2Pager[P], each func(P)) bool {
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if !r.done(area, action, err) {
			return false
		}
		each(page)
	}
	return true
}

// vpcRead reads every page of one EC2 read over the instances' VPCs
// into dst, all or nothing.
func vpcRead[P, T any](ctx context.Context, r *awsReader, area, action string, p ec2Pager[P], items func(P) []T, dst *[]T) {
	if len(r.vpcIDs) == 0 {
		return
	}
	var out []T
	if !ec2Pages(ctx, r, area, action, p, func(page P) { out = append(out, items(page)...) }) {
		return
	}
	r.mu.Lock()
	*dst = out
	r.mu.Unlock()
}

// sortAccount orders what concurrent reads appended.
func sortAccount(a *check.AWSAccount) {
	sort.Slice(a.Instances, func(i, j int) bool { return a.Instances[i].ID < a.Instances[j].ID })
	sort.Slice(a.LoadBalancers, func(i, j int) bool {
		return a.LoadBalancers[i].Type+a.LoadBalancers[i].Name < a.LoadBalancers[j].Type+a.LoadBalancers[j].Name
	})
	sort.Slice(a.Profiles, func(i, j int) bool { return a.Profiles[i].ARN < a.Profiles[j].ARN })
	sort.Slice(a.Simulations, func(i, j int) bool { return a.Simulations[i].Principal < a.Simulations[j].Principal })
	sort.SliceStable(a.Unread, func(i, j int) bool { return a.Unread[i].Action < a.Unread[j].Action })
}

// unread is what could not be read for an area.
func unread(a *check.AWSAccount, area string) []check.AWSUnread {
	var out []check.AWSUnread
	for _, u := range a.Unread {
		if u.Area == area {
			out = append(out, u)
		}
	}
	return out
}

// ccmRelease is the CCM release whose IAM actions and rules count: the
// workload's image tag when it reads as a release (v1.30.4), else the
// newest policy, which holds every action of the older ones.
func ccmRelease(s *check.Snapshot) string {
	if s.Workload != nil {
		tag := renderer.ImageTag(s.CCMImage())
		if _, err := kubeversion.Parse(tag); err == nil {
			return tag
		}
	}
	return releases.Newest()
}

// The AWS rules (check --aws): each judges the account as the CCM release
// that runs, or will run, would use it, and returns nothing without --aws.

// awsView is what the AWS rules share, worked out once per view: the
// instances by ID and name, the nodes whose instance the CCM finds, and
// the cluster ID.
type awsView struct {
	index                instanceIndex
	nodes                []nodeInstance
	clusterID, clusterBy string
}

// Side is the AWS side of check, which the command that assembles check
// composes in (check.Input.AWSSide).
func Side() *check.AWSSide {
	return &check.AWSSide{
		Collect: collect,
		NewView: func(v *check.View) any { return newAWSView(v) },
		Instances: func(v *check.View) map[string]string {
			out := map[string]string{}
			for _, ni := range nodeInstances(v) {
				out[ni.node.Name] = ni.instance.ID
			}
			return out
		},
		Rules: map[string]func(*check.View) []check.Finding{
			"aws account":    awsAccountRule,
			"instance":       instanceRule,
			"cluster id":     clusterIDRule,
			"security group": securityGroupRule,
			"subnet":         subnetRule,
			"iam simulation": iamSimulationRule,
			"metadata":       metadataRule,
			"load balancer":  loadBalancerRule,
		},
	}
}

// shared is the view the AWS rules share, which NewView worked out.
func shared(v *check.View) *awsView {
	av, _ := v.AWSView.(*awsView)
	return av
}

// newAWSView works out the AWS rules' shared view of an account.
func newAWSView(v *check.View) *awsView {
	av := &awsView{index: indexInstances(v.AWS.Instances)}
	cuts := cutsInstanceIDNames(v)
	for i := range v.Nodes {
		n := v.Nodes[i].Node()
		if in, ok := av.index.ofNode(n, cuts); ok {
			av.nodes = append(av.nodes, nodeInstance{n, in})
		}
	}
	av.clusterID, av.clusterBy = findClusterID(v, av.nodes)
	return av
}
