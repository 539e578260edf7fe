package check

import (
	"context"
	"errors"
	"maps"
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
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/reach"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/upstream"
)

// AWSError is an AWS account check cannot read at all: no region, no
// credentials or expired ones, or no endpoint that answers. The command
// exits 3.
type AWSError struct{ Msg string }

func (e *AWSError) Error() string { return "AWS: " + e.Msg }

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
	s     *Snapshot
	acct  *AWSAccount
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

// collectAWS reads the account the cluster's nodes run in.
func (s *Snapshot) collectAWS(ctx context.Context) error {
	if s.AWSOptions == nil {
		return nil
	}
	o := s.AWSOptions
	acct := &AWSAccount{Region: o.Region, RegionFrom: "flag", Calls: map[string]int{}, Instances: []AWSInstance{},
		VPCs: []AWSVPC{}, Subnets: []AWSSubnet{}, SecurityGroups: []AWSSecurityGroup{}, RouteTables: []AWSRouteTable{},
		Profiles: []AWSInstanceProfile{}, Simulations: []AWSSimulation{}, LoadBalancers: []AWSLoadBalancer{}}
	if acct.Region == "" {
		acct.Region, acct.RegionFrom = clusterRegion(s.Nodes), "nodes"
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
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return &AWSError{Msg: "loading the AWS configuration: " + oneLine(err.Error()) + profileHint(o.Profile)}
	}
	if acct.Region == "" {
		acct.Region, acct.RegionFrom = cfg.Region, "sdk"
	}
	if acct.Region == "" {
		return &AWSError{Msg: "no region: the nodes show none (no aws:///ZONE/ providerID, topology.kubernetes.io/region label or EC2 node name); give --aws-region, or set AWS_REGION or the profile's region"}
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return &AWSError{Msg: "no AWS credentials: " + credentialsError(err) + "; check reads them as the AWS CLI does (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, --aws-profile or AWS_PROFILE, SSO, web identity, instance metadata)" + profileHint(o.Profile)}
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
		return &AWSError{Msg: "nothing could be read: " + u.Action + ": " + u.Message}
	}
	sortAccount(acct)
	return nil
}

func profileHint(profile string) string {
	if profile == "" {
		return ""
	}
	return " (profile " + profile + ")"
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
		for _, o := range serviceOverrides(cc.Text) {
			svc, _, known := upstream.ServiceOfName(o.service)
			if !known || o.url == "" || (o.region != "" && o.region != r.acct.Region) {
				continue
			}
			override[svc.ServiceID] = o.url
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
	u := AWSUnread{Area: area, Action: action}
	var api smithy.APIError
	switch {
	case errors.As(err, &api):
		u.Code, u.Message = api.ErrorCode(), oneLine(api.ErrorMessage())
		u.Denied = deniedCodes[u.Code]
		if credentialCodes[u.Code] && r.fatal == nil {
			r.fatal = &AWSError{Msg: action + ": " + u.Code + ": " + u.Message + ": renew the credentials (a new session token, aws sso login, or another profile)"}
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

// callerIdentity asks who check reads as (sts:GetCallerIdentity: needs no
// permission); it fails only on credentials AWS does not take.
func (r *awsReader) callerIdentity(ctx context.Context) {
	out, err := r.sts.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if r.done(AreaAWS, "sts:GetCallerIdentity", err) {
		r.acct.Caller = aws.ToString(out.Arn)
	}
}

// instances reads the instances behind the nodes: by the instance IDs of
// their providerIDs (and names that are instance IDs), by the names the
// CCM looks up (private-dns-name), and, for a node found by neither, by
// its InternalIP, with filters of at most awsFilterValues values.
func (r *awsReader) instances(ctx context.Context) {
	var ids, names []string
	for i := range r.s.Nodes {
		n := &r.s.Nodes[i]
		if n.Spec.ProviderID != "" {
			if id, fargate, ok := instanceIDOf(n.Spec.ProviderID); ok && !fargate {
				ids = append(ids, id)
			}
			continue
		}
		if id, ok := nameAsInstanceID(n.Name, true); ok {
			ids = append(ids, id)
			continue
		}
		names = append(names, n.Name)
	}
	seen := map[string]bool{}
	r.describeInstances(ctx, "instance-id", ids, seen)
	r.describeInstances(ctx, "private-dns-name", names, seen)
	var ips []string
	byDNS := map[string]bool{}
	for _, in := range r.acct.Instances {
		byDNS[in.PrivateDNSName] = true
	}
	for i := range r.s.Nodes {
		n := &r.s.Nodes[i]
		if n.Spec.ProviderID == "" && !byDNS[n.Name] && !strings.HasPrefix(n.Name, "i-") {
			if ip := internalIP(n); ip != "" {
				ips = append(ips, ip)
			}
		}
	}
	r.describeInstances(ctx, "private-ip-address", ips, seen)
}

func (r *awsReader) describeInstances(ctx context.Context, filter string, values []string, seen map[string]bool) {
	values = slices.Compact(slices.Sorted(slices.Values(values)))
	for chunk := range slices.Chunk(values, awsFilterValues) {
		p := ec2.NewDescribeInstancesPaginator(r.ec2, &ec2.DescribeInstancesInput{
			Filters: []ec2types.Filter{{Name: aws.String(filter), Values: chunk}}, MaxResults: aws.Int32(1000)})
		if !ec2Pages(ctx, r, AreaInstance, "ec2:DescribeInstances", p, func(page *ec2.DescribeInstancesOutput) {
			for _, res := range page.Reservations {
				for _, in := range res.Instances {
					if id := aws.ToString(in.InstanceId); !seen[id] {
						seen[id] = true
						r.acct.Instances = append(r.acct.Instances, instanceOf(in))
					}
				}
			}
		}) {
			return
		}
	}
}

func instanceOf(in ec2types.Instance) AWSInstance {
	out := AWSInstance{ID: aws.ToString(in.InstanceId), PrivateDNSName: aws.ToString(in.PrivateDnsName), PrivateIP: aws.ToString(in.PrivateIpAddress),
		VPC: aws.ToString(in.VpcId), Subnet: aws.ToString(in.SubnetId), Tags: tagsOf(in.Tags)}
	if in.State != nil {
		out.State = string(in.State.Name)
	}
	if in.Placement != nil {
		out.Zone = aws.ToString(in.Placement.AvailabilityZone)
	}
	for _, g := range in.SecurityGroups {
		out.SecurityGroups = append(out.SecurityGroups, aws.ToString(g.GroupId))
	}
	if in.IamInstanceProfile != nil {
		out.Profile = aws.ToString(in.IamInstanceProfile.Arn)
	}
	if m := in.MetadataOptions; m != nil {
		out.HTTPTokens, out.HTTPEndpoint = string(m.HttpTokens), string(m.HttpEndpoint)
		out.HopLimit = aws.ToInt32(m.HttpPutResponseHopLimit)
	}
	return out
}

func tagsOf(tags []ec2types.Tag) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

func vpcFilter(ids []string) []ec2types.Filter {
	return []ec2types.Filter{{Name: aws.String("vpc-id"), Values: ids}}
}

// vpcs reads the VPCs and their DHCP options' domain names.
func (r *awsReader) vpcs(ctx context.Context) {
	ids := r.vpcIDs
	if len(ids) == 0 {
		return
	}
	out, err := r.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: ids})
	if !r.done(AreaInstance, "ec2:DescribeVpcs", err) {
		return
	}
	var vpcs []AWSVPC
	dhcp := map[string][]int{}
	for _, v := range out.Vpcs {
		vpcs = append(vpcs, AWSVPC{ID: aws.ToString(v.VpcId)})
		if d := aws.ToString(v.DhcpOptionsId); d != "" && d != "default" {
			dhcp[d] = append(dhcp[d], len(vpcs)-1)
		}
	}
	if len(dhcp) > 0 {
		opts, err := r.ec2.DescribeDhcpOptions(ctx, &ec2.DescribeDhcpOptionsInput{DhcpOptionsIds: slices.Sorted(maps.Keys(dhcp))})
		if r.done(AreaInstance, "ec2:DescribeDhcpOptions", err) {
			for _, o := range opts.DhcpOptions {
				for _, c := range o.DhcpConfigurations {
					if aws.ToString(c.Key) == "domain-name" && len(c.Values) > 0 {
						for _, i := range dhcp[aws.ToString(o.DhcpOptionsId)] {
							vpcs[i].DHCPDomain = aws.ToString(c.Values[0].Value)
						}
					}
				}
			}
		}
	}
	r.mu.Lock()
	r.acct.VPCs = vpcs
	r.mu.Unlock()
}

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

// subnets reads the subnets of the instances' VPCs: one paged
// DescribeSubnets for them all.
func (r *awsReader) subnets(ctx context.Context) {
	vpcRead(ctx, r, AreaSubnet, "ec2:DescribeSubnets", ec2.NewDescribeSubnetsPaginator(r.ec2, &ec2.DescribeSubnetsInput{Filters: vpcFilter(r.vpcIDs)}),
		func(page *ec2.DescribeSubnetsOutput) (out []AWSSubnet) {
			for _, s := range page.Subnets {
				out = append(out, AWSSubnet{ID: aws.ToString(s.SubnetId), VPC: aws.ToString(s.VpcId), Zone: aws.ToString(s.AvailabilityZone), Tags: tagsOf(s.Tags)})
			}
			return out
		}, &r.acct.Subnets)
}

// securityGroups reads the security groups of the instances' VPCs.
func (r *awsReader) securityGroups(ctx context.Context) {
	vpcRead(ctx, r, AreaSecurityGroup, "ec2:DescribeSecurityGroups", ec2.NewDescribeSecurityGroupsPaginator(r.ec2, &ec2.DescribeSecurityGroupsInput{Filters: vpcFilter(r.vpcIDs)}),
		func(page *ec2.DescribeSecurityGroupsOutput) (out []AWSSecurityGroup) {
			for _, g := range page.SecurityGroups {
				out = append(out, AWSSecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName), VPC: aws.ToString(g.VpcId), Tags: tagsOf(g.Tags)})
			}
			return out
		}, &r.acct.SecurityGroups)
}

// routeTables reads the route tables of the instances' VPCs.
func (r *awsReader) routeTables(ctx context.Context) {
	vpcRead(ctx, r, AreaSubnet, "ec2:DescribeRouteTables", ec2.NewDescribeRouteTablesPaginator(r.ec2, &ec2.DescribeRouteTablesInput{Filters: vpcFilter(r.vpcIDs)}),
		func(page *ec2.DescribeRouteTablesOutput) (out []AWSRouteTable) {
			for _, t := range page.RouteTables {
				rt := AWSRouteTable{ID: aws.ToString(t.RouteTableId), VPC: aws.ToString(t.VpcId)}
				for _, a := range t.Associations {
					if aws.ToBool(a.Main) {
						rt.Main = true
					}
					if s := aws.ToString(a.SubnetId); s != "" {
						rt.Subnets = append(rt.Subnets, s)
					}
				}
				for _, route := range t.Routes {
					if g := aws.ToString(route.GatewayId); g != "" {
						rt.Gateways = append(rt.Gateways, g)
					}
				}
				out = append(out, rt)
			}
			return out
		}, &r.acct.RouteTables)
}

// zones reads the zones' types (the CCM from v1.26.1 leaves a load
// balancer out of local, wavelength and outpost zones).
func (r *awsReader) zones(ctx context.Context) {
	out, err := r.ec2.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	if !r.done(AreaSubnet, "ec2:DescribeAvailabilityZones", err) {
		return
	}
	types := map[string]string{}
	for _, z := range out.AvailabilityZones {
		types[aws.ToString(z.ZoneName)] = aws.ToString(z.ZoneType)
	}
	r.mu.Lock()
	r.acct.ZoneTypes = types
	r.mu.Unlock()
}

// principals simulates the policies of the principals the CCM calls AWS
// as (--aws-ccm-principal, else the control-plane instances' instance
// profile roles) against the actions of the CCM's release.
func (r *awsReader) principals(ctx context.Context) {
	type who struct{ arn, from string }
	var ps []who
	if p := r.s.AWSOptions.Principal; p != "" {
		ps = append(ps, who{p, "flag"})
	} else {
		var profiles []string
		for _, in := range r.controlPlaneInstances() {
			if in.Profile != "" && !slices.Contains(profiles, in.Profile) {
				profiles = append(profiles, in.Profile)
			}
		}
		sort.Strings(profiles)
		for _, arn := range profiles {
			_, name, _ := strings.Cut(arn, ":instance-profile/")
			if i := strings.LastIndexByte(name, '/'); i >= 0 {
				name = name[i+1:]
			}
			out, err := r.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
			if !r.done(AreaIAM, "iam:GetInstanceProfile", err) {
				continue
			}
			ip := AWSInstanceProfile{ARN: arn, Roles: []string{}}
			for _, role := range out.InstanceProfile.Roles {
				ip.Roles = append(ip.Roles, aws.ToString(role.Arn))
				ps = append(ps, who{aws.ToString(role.Arn), arn})
			}
			r.mu.Lock()
			r.acct.Profiles = append(r.acct.Profiles, ip)
			r.mu.Unlock()
		}
	}
	actions := upstream.IAMControlPlane(r.s.ccmRelease())
	for _, p := range ps {
		sim := AWSSimulation{Principal: p.arn, From: p.from, Decisions: map[string]string{}}
		pg := iam.NewSimulatePrincipalPolicyPaginator(r.iam, &iam.SimulatePrincipalPolicyInput{PolicySourceArn: aws.String(p.arn), ActionNames: actions})
		ok := true
		for pg.HasMorePages() {
			out, err := pg.NextPage(ctx)
			if ok = r.done(AreaIAM, "iam:SimulatePrincipalPolicy", err); !ok {
				break
			}
			for _, e := range out.EvaluationResults {
				sim.Decisions[aws.ToString(e.EvalActionName)] = string(e.EvalDecision)
			}
		}
		if ok {
			r.mu.Lock()
			r.acct.Simulations = append(r.acct.Simulations, sim)
			r.mu.Unlock()
		}
	}
}

// controlPlaneInstances are the instances of the control-plane nodes.
func (r *awsReader) controlPlaneInstances() []AWSInstance {
	var out []AWSInstance
	idx := indexInstances(r.acct.Instances)
	for i := range r.s.Nodes {
		n := &r.s.Nodes[i]
		if cp, _, _ := controlPlane(n); !cp {
			continue
		}
		if in, ok := idx.ofNode(n, true); ok {
			out = append(out, in)
		}
	}
	return out
}

// classicELBs reads the Classic ELBs of the region and their tags.
func (r *awsReader) classicELBs(ctx context.Context) {
	var names []string
	p := elb.NewDescribeLoadBalancersPaginator(r.elb, &elb.DescribeLoadBalancersInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if !r.done(AreaLoadBalancer, "elasticloadbalancing:DescribeLoadBalancers", err) {
			return
		}
		for _, lb := range page.LoadBalancerDescriptions {
			names = append(names, aws.ToString(lb.LoadBalancerName))
		}
	}
	tags := map[string]map[string]string{}
	for chunk := range slices.Chunk(names, awsTagBatch) {
		out, err := r.elb.DescribeTags(ctx, &elb.DescribeTagsInput{LoadBalancerNames: chunk})
		if !r.done(AreaLoadBalancer, "elasticloadbalancing:DescribeTags", err) {
			break
		}
		for _, d := range out.TagDescriptions {
			m := map[string]string{}
			for _, t := range d.Tags {
				m[aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
			tags[aws.ToString(d.LoadBalancerName)] = m
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		r.acct.LoadBalancers = append(r.acct.LoadBalancers, AWSLoadBalancer{Name: n, Type: "classic", Tags: tags[n]})
	}
}

// elbv2s reads the NLBs and ALBs of the region and their tags.
func (r *awsReader) elbv2s(ctx context.Context) {
	var lbs []AWSLoadBalancer
	p := elbv2.NewDescribeLoadBalancersPaginator(r.elbv2, &elbv2.DescribeLoadBalancersInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if !r.done(AreaLoadBalancer, "elasticloadbalancing:DescribeLoadBalancers", err) {
			return
		}
		for _, lb := range page.LoadBalancers {
			lbs = append(lbs, AWSLoadBalancer{Name: aws.ToString(lb.LoadBalancerName), Type: string(lb.Type), ARN: aws.ToString(lb.LoadBalancerArn)})
		}
	}
	for chunk := range slices.Chunk(lbs, awsTagBatch) {
		var arns []string
		for _, lb := range chunk {
			arns = append(arns, lb.ARN)
		}
		out, err := r.elbv2.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: arns})
		if !r.done(AreaLoadBalancer, "elasticloadbalancing:DescribeTags", err) {
			break
		}
		for _, d := range out.TagDescriptions {
			m := map[string]string{}
			for _, t := range d.Tags {
				m[aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
			for i := range chunk {
				if chunk[i].ARN == aws.ToString(d.ResourceArn) {
					chunk[i].Tags = m
				}
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acct.LoadBalancers = append(r.acct.LoadBalancers, lbs...)
}

// sortAccount orders what concurrent reads appended.
func sortAccount(a *AWSAccount) {
	sort.Slice(a.Instances, func(i, j int) bool { return a.Instances[i].ID < a.Instances[j].ID })
	sort.Slice(a.LoadBalancers, func(i, j int) bool {
		return a.LoadBalancers[i].Type+a.LoadBalancers[i].Name < a.LoadBalancers[j].Type+a.LoadBalancers[j].Name
	})
	sort.Slice(a.Profiles, func(i, j int) bool { return a.Profiles[i].ARN < a.Profiles[j].ARN })
	sort.Slice(a.Simulations, func(i, j int) bool { return a.Simulations[i].Principal < a.Simulations[j].Principal })
	sort.SliceStable(a.Unread, func(i, j int) bool { return a.Unread[i].Action < a.Unread[j].Action })
}

// ccmRelease is the CCM release whose IAM actions and rules count: the
// workload's image tag when it reads as a release (v1.30.4), else the
// newest policy, which holds every action of the older ones.
func (s *Snapshot) ccmRelease() string {
	if s.Workload != nil {
		tag := imageTag(s.Workload.spec.Spec.Containers[s.Workload.container].Image)
		if v, err := version.ParseGeneric(tag); err == nil && v.Major() == 1 {
			return tag
		}
	}
	return releases.Newest()
}

// instanceIndex finds the instances read by ID and, the non-terminated
// ones (the CCM's filter), by private DNS name.
type instanceIndex struct {
	byID, byDNS map[string]AWSInstance
}

func indexInstances(ins []AWSInstance) instanceIndex {
	x := instanceIndex{byID: make(map[string]AWSInstance, len(ins)), byDNS: make(map[string]AWSInstance, len(ins))}
	for _, in := range ins {
		x.byID[in.ID] = in
		if in.PrivateDNSName != "" && in.State != "terminated" {
			x.byDNS[in.PrivateDNSName] = in
		}
	}
	return x
}

// ofNode is the instance the CCM finds for a node: by its providerID's
// instance ID, else by its name (an instance ID, or the private DNS name
// of a non-terminated instance; cuts: the release cuts a name that is an
// instance ID at the first dot). ok is false when none.
func (x instanceIndex) ofNode(n *corev1.Node, cuts bool) (AWSInstance, bool) {
	if n.Spec.ProviderID != "" {
		id, fargate, ok := instanceIDOf(n.Spec.ProviderID)
		if !ok || fargate {
			return AWSInstance{}, false
		}
		in, ok := x.byID[id]
		return in, ok
	}
	if id, ok := nameAsInstanceID(n.Name, cuts); ok {
		in, ok := x.byID[id]
		return in, ok
	}
	in, ok := x.byDNS[n.Name]
	return in, ok
}

// unread is what could not be read for an area.
func (a *AWSAccount) unread(area string) []AWSUnread {
	var out []AWSUnread
	for _, u := range a.Unread {
		if u.Area == area {
			out = append(out, u)
		}
	}
	return out
}

// AWSProfiles lists the profiles of the shared config and credentials
// files the SDK reads ($AWS_CONFIG_FILE, $AWS_SHARED_CREDENTIALS_FILE, else
// ~/.aws/config and ~/.aws/credentials), for --aws-profile's completion.
func AWSProfiles() []string {
	var names []string
	read := func(path string, prefixed bool) {
		data, err := os.ReadFile(path)
		if err != nil {
			return
		}
		for _, s := range iniSections(string(data)) {
			name := strings.Join(strings.Fields(s.head), " ")
			if prefixed {
				if p, ok := strings.CutPrefix(name, "profile "); ok {
					name = p
				} else if name != "default" {
					continue // sso-session, services
				}
			}
			if name != "" && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	cfg, creds := os.Getenv("AWS_CONFIG_FILE"), os.Getenv("AWS_SHARED_CREDENTIALS_FILE")
	if cfg == "" {
		cfg = config.DefaultSharedConfigFilename()
	}
	if creds == "" {
		creds = config.DefaultSharedCredentialsFilename()
	}
	read(cfg, true)
	read(creds, false)
	sort.Strings(names)
	return names
}
