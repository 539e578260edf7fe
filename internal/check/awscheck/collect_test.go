package awscheck

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check/checktest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile/safefiletest"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/testtools"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The collector's faults, with the real AWS SDK against a server that
// answers as AWS does (its query protocols' XML, its error envelopes):
// what moto cannot be made to do on cue (throttling, an expired token, a
// refusal of one read).

// fakeAWS answers EC2, ELB, ELBv2 and STS queries as AWS does: faults
// maps "service:Action" to the error code it always answers, failN to how
// many times it answers Throttling before it answers the call.
type fakeAWS struct {
	mu     sync.Mutex
	faults map[string]string
	failN  map[string]int
	calls  map[string]int
}

func (f *fakeAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	service := "?"
	if _, after, ok := strings.Cut(r.Header.Get("Authorization"), "Credential="); ok {
		if parts := strings.Split(after, "/"); len(parts) > 3 {
			service = parts[3]
		}
	}
	if service == "elasticloadbalancing" && form.Get("Version") == "2015-12-01" {
		service = "elbv2"
	}
	action := service + ":" + form.Get("Action")
	f.mu.Lock()
	f.calls[action]++
	code := f.faults[action]
	if f.failN[action] > 0 {
		f.failN[action]--
		code = "Throttling"
	}
	f.mu.Unlock()
	if code != "" {
		status := http.StatusForbidden
		if code == "Throttling" || code == "RequestLimitExceeded" {
			status = http.StatusBadRequest
		}
		w.WriteHeader(status)
		if service == "ec2" {
			fmt.Fprintf(w, `<Response><Errors><Error><Code>%s</Code><Message>refused by the test</Message></Error></Errors><RequestID>r</RequestID></Response>`, code)
		} else {
			fmt.Fprintf(w, `<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>refused by the test</Message></Error><RequestId>r</RequestId></ErrorResponse>`, code)
		}
		return
	}
	name := form.Get("Action")
	switch action {
	case "sts:GetCallerIdentity":
		fmt.Fprint(w, `<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/checker</Arn><Account>123456789012</Account><UserId>U</UserId></GetCallerIdentityResult></GetCallerIdentityResponse>`)
	case "ec2:DescribeInstances":
		fmt.Fprint(w, `<DescribeInstancesResponse><reservationSet><item><instancesSet><item><instanceId>i-0123</instanceId><instanceState><name>running</name></instanceState>`+
			`<privateDnsName>ip-10-0-1-5.us-west-2.compute.internal</privateDnsName><vpcId>vpc-1</vpcId><subnetId>subnet-1</subnetId>`+
			`<placement><availabilityZone>us-west-2a</availabilityZone></placement><groupSet><item><groupId>sg-1</groupId></item></groupSet>`+
			`<tagSet><item><key>kubernetes.io/cluster/c1</key><value>owned</value></item></tagSet></item></instancesSet></item></reservationSet></DescribeInstancesResponse>`)
	case "ec2:DescribeVpcs":
		fmt.Fprint(w, `<DescribeVpcsResponse><vpcSet><item><vpcId>vpc-1</vpcId><dhcpOptionsId>dopt-1</dhcpOptionsId></item></vpcSet></DescribeVpcsResponse>`)
	case "ec2:DescribeDhcpOptions":
		fmt.Fprint(w, `<DescribeDhcpOptionsResponse><dhcpOptionsSet><item><dhcpOptionsId>dopt-1</dhcpOptionsId><dhcpConfigurationSet><item><key>domain-name</key><valueSet><item><value>corp.example</value></item></valueSet></item></dhcpConfigurationSet></item></dhcpOptionsSet></DescribeDhcpOptionsResponse>`)
	case "ec2:DescribeSubnets":
		fmt.Fprint(w, `<DescribeSubnetsResponse><subnetSet><item><subnetId>subnet-1</subnetId><vpcId>vpc-1</vpcId><availabilityZone>us-west-2a</availabilityZone></item></subnetSet></DescribeSubnetsResponse>`)
	case "ec2:DescribeSecurityGroups":
		fmt.Fprint(w, `<DescribeSecurityGroupsResponse><securityGroupInfo><item><groupId>sg-1</groupId><vpcId>vpc-1</vpcId></item></securityGroupInfo></DescribeSecurityGroupsResponse>`)
	case "ec2:DescribeRouteTables":
		fmt.Fprint(w, `<DescribeRouteTablesResponse><routeTableSet><item><routeTableId>rtb-1</routeTableId><vpcId>vpc-1</vpcId><associationSet><item><main>true</main></item></associationSet><routeSet><item><gatewayId>igw-1</gatewayId></item></routeSet></item></routeTableSet></DescribeRouteTablesResponse>`)
	case "ec2:DescribeAvailabilityZones":
		fmt.Fprint(w, `<DescribeAvailabilityZonesResponse><availabilityZoneInfo><item><zoneName>us-west-2a</zoneName><zoneType>availability-zone</zoneType></item></availabilityZoneInfo></DescribeAvailabilityZonesResponse>`)
	case "elasticloadbalancing:DescribeLoadBalancers", "elbv2:DescribeLoadBalancers":
		fmt.Fprintf(w, `<%sResponse><%sResult></%sResult></%sResponse>`, name, name, name, name)
	default:
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `<ErrorResponse><Error><Code>InvalidAction</Code><Message>%s</Message></Error></ErrorResponse>`, action)
	}
}

// awsEnv points the SDK at a server with static keys and nothing of the
// machine's AWS configuration.
func awsEnv(t testing.TB, endpoint string) {
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, v := range []string{"AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL_IAM", "AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING", "AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING_V2"} {
		t.Setenv(v, "")
	}
}

func awsSnapshot(region string) *check.Snapshot {
	return &check.Snapshot{Input: check.Input{AWSOptions: &check.AWSOptions{Region: region}},
		Nodes: []corev1.Node{checktest.Node("cp-1", checktest.ProviderID("aws:///us-west-2a/i-0123"))}}
}

// goTypeName is how a Go type leaks into a message: *smithy.GenericAPIError,
// types.Foo, %!v.
var goTypeName = regexp.MustCompile(`\*[a-z0-9]+\.[A-Z]|%!|\btypes\.[A-Z]|goroutine `)

func TestCollectAWS(t *testing.T) {
	for _, c := range []struct {
		name   string
		faults map[string]string
		failN  map[string]int
		region string
		// fatal: the error collect returns ("": none)
		fatal string
		// unread: the area and action of the one read that failed
		unreadArea, unreadAction, unreadCode string
	}{
		{name: "every read answered", region: "us-west-2"},
		{name: "one read refused", region: "us-west-2", faults: map[string]string{"ec2:DescribeSubnets": "UnauthorizedOperation"},
			unreadArea: check.AreaSubnet, unreadAction: "ec2:DescribeSubnets", unreadCode: "UnauthorizedOperation"},
		{name: "ELB refused", region: "us-west-2", faults: map[string]string{"elasticloadbalancing:DescribeLoadBalancers": "AccessDenied"},
			unreadArea: check.AreaLoadBalancer, unreadAction: "elasticloadbalancing:DescribeLoadBalancers", unreadCode: "AccessDenied"},
		{name: "throttled, then answered", region: "us-west-2", failN: map[string]int{"ec2:DescribeInstances": 2}},
		{name: "throttled past the retries", region: "us-west-2", failN: map[string]int{"ec2:DescribeSubnets": 50},
			unreadArea: check.AreaSubnet, unreadAction: "ec2:DescribeSubnets", unreadCode: "Throttling"},
		{name: "an expired token", region: "us-west-2", faults: map[string]string{"sts:GetCallerIdentity": "ExpiredToken"},
			fatal: "AWS: sts:GetCallerIdentity: ExpiredToken: refused by the test: renew the credentials"},
		{name: "no region", fatal: "AWS: no region: the nodes show none"},
		{name: "nothing readable", region: "us-west-2", faults: map[string]string{
			"sts:GetCallerIdentity": "AccessDenied", "ec2:DescribeInstances": "UnauthorizedOperation", "ec2:DescribeAvailabilityZones": "UnauthorizedOperation",
			"elasticloadbalancing:DescribeLoadBalancers": "AccessDenied", "elbv2:DescribeLoadBalancers": "AccessDenied"},
			fatal: "AWS: nothing could be read: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := &fakeAWS{faults: c.faults, failN: c.failN, calls: map[string]int{}}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			awsEnv(t, srv.URL)
			s := awsSnapshot(c.region)
			if c.region == "" {
				s.Nodes = []corev1.Node{checktest.Node("cp-1")}
			}
			err := collect(context.Background(), s)
			if c.fatal != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.fatal) {
					t.Fatalf("error %v, want %q", err, c.fatal)
				}
				if goTypeName.MatchString(err.Error()) || strings.Contains(err.Error(), "\n") {
					t.Errorf("not one plain line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a := s.AWS
			if c.unreadAction == "" && len(a.Unread) > 0 {
				t.Fatalf("unread: %+v", a.Unread)
			}
			if c.unreadAction != "" {
				if len(a.Unread) != 1 || a.Unread[0].Area != c.unreadArea || a.Unread[0].Action != c.unreadAction || a.Unread[0].Code != c.unreadCode {
					t.Fatalf("unread: %+v", a.Unread)
				}
				if goTypeName.MatchString(a.Unread[0].Message) {
					t.Errorf("message: %q", a.Unread[0].Message)
				}
			}
			if len(a.Instances) != 1 || a.Instances[0].ID != "i-0123" || a.Caller != "arn:aws:iam::123456789012:user/checker" {
				t.Errorf("instances %+v, caller %q", a.Instances, a.Caller)
			}
			if c.unreadArea != check.AreaSubnet && (len(a.Subnets) != 1 || len(a.RouteTables) != 1) {
				t.Errorf("the other reads: subnets %+v, route tables %+v", a.Subnets, a.RouteTables)
			}
			if a.VPCs[0].DHCPDomain != "corp.example" {
				t.Errorf("VPCs %+v", a.VPCs)
			}
			if n := fake.calls["ec2:DescribeInstances"]; c.failN["ec2:DescribeInstances"] > 0 && n != 3 {
				t.Errorf("DescribeInstances: %d requests, want 2 throttled and 1 answered", n)
			}
			if n := fake.calls["ec2:DescribeSubnets"]; c.failN["ec2:DescribeSubnets"] > 0 && n != awsMaxAttempts {
				t.Errorf("DescribeSubnets: %d requests, want %d (the SDK's attempts)", n, awsMaxAttempts)
			}
			for action := range a.Calls {
				if action != "sts:GetCallerIdentity" && !slices.Contains(check.AWSReadActions, action) {
					t.Errorf("check called %s, which AWSReadActions (the documented policy) lacks", action)
				}
			}
			for action := range fake.calls {
				if _, a, _ := strings.Cut(action, ":"); !strings.HasPrefix(a, "Describe") && !strings.HasPrefix(a, "Get") && !strings.HasPrefix(a, "List") {
					t.Errorf("a call that is not a read: %s", action)
				}
			}
		})
	}
}

// TestCollectAWSUnreachable: an endpoint that does not answer is said as
// such, in one line, within the timeout.
func TestCollectAWSUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	awsEnv(t, "http://"+addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = collect(ctx, awsSnapshot("us-west-2"))
	if err == nil || !strings.HasPrefix(err.Error(), "AWS: nothing could be read: ") || !strings.Contains(err.Error(), "no answer") {
		t.Fatalf("%v", err)
	}
	if goTypeName.MatchString(err.Error()) {
		t.Errorf("%q", err)
	}
}

// TestCollectAWSNoCredentials: without credentials anywhere, check says so
// and how it looks for them.
func TestCollectAWSNoCredentials(t *testing.T) {
	awsEnv(t, "http://127.0.0.1:1")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	err := collect(context.Background(), awsSnapshot("us-west-2"))
	if err == nil || !strings.HasPrefix(err.Error(), "AWS: no AWS credentials: ") || !strings.Contains(err.Error(), "--aws-profile") {
		t.Fatalf("%v", err)
	}
	if goTypeName.MatchString(err.Error()) {
		t.Errorf("%q", err)
	}
}

// TestDocsAWSPolicy: the read-only policy docs/check.md gives for check
// --aws allows exactly the actions check calls (AWSReadActions), each of
// them a read.
func TestDocsAWSPolicy(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testtools.Root(), "docs", "check.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "<!-- check-aws-policy")
	if !ok {
		t.Fatal("docs/check.md: no check-aws-policy block")
	}
	_, after, _ = strings.Cut(after, "```json\n")
	block, _, _ := strings.Cut(after, "```")
	var doc struct {
		Statement []struct {
			Effect   string
			Action   []string
			Resource string
		}
	}
	if err := json.Unmarshal([]byte(block), &doc); err != nil {
		t.Fatalf("docs/check.md's policy: %v", err)
	}
	if len(doc.Statement) != 1 || doc.Statement[0].Effect != "Allow" || doc.Statement[0].Resource != "*" ||
		!slices.Equal(doc.Statement[0].Action, check.AWSReadActions) {
		t.Errorf("docs/check.md's policy %+v; check calls %v", doc.Statement, check.AWSReadActions)
	}
	for _, a := range check.AWSReadActions {
		_, op, _ := strings.Cut(a, ":")
		if !strings.HasPrefix(op, "Describe") && !strings.HasPrefix(op, "Get") && !strings.HasPrefix(op, "List") && op != "SimulatePrincipalPolicy" {
			t.Errorf("%s is not a read", a)
		}
	}
}

// scaleAWS answers DescribeInstances with one instance per instance-id
// filter value, and every other read as fakeAWS does.
type scaleAWS struct {
	fakeAWS
}

func (f *scaleAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	if form.Get("Action") != "DescribeInstances" {
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		f.fakeAWS.ServeHTTP(w, r)
		return
	}
	f.mu.Lock()
	f.calls["ec2:DescribeInstances"]++
	f.mu.Unlock()
	var b strings.Builder
	b.WriteString(`<DescribeInstancesResponse><reservationSet><item><instancesSet>`)
	for i := 1; ; i++ {
		id := form.Get(fmt.Sprintf("Filter.1.Value.%d", i))
		if id == "" {
			break
		}
		fmt.Fprintf(&b, `<item><instanceId>%s</instanceId><instanceState><name>running</name></instanceState><vpcId>vpc-1</vpcId><subnetId>subnet-1</subnetId>`+
			`<placement><availabilityZone>us-west-2a</availabilityZone></placement><groupSet><item><groupId>sg-1</groupId></item></groupSet>`+
			`<tagSet><item><key>kubernetes.io/cluster/c1</key><value>owned</value></item></tagSet></item>`, id)
	}
	b.WriteString(`</instancesSet></item></reservationSet></DescribeInstancesResponse>`)
	fmt.Fprint(w, b.String())
}

// BenchmarkCheckAWSCalls: the AWS calls check --aws makes grow with
// nodes/200 (EC2's filter values per call), not with nodes: reported as
// aws-calls/op for 300 and 3,000 nodes, each with its providerID. (The
// CCM itself makes at least one DescribeInstances per node it
// initialises: e2e/awsccm TestRenderedCCM logs its calls.)
func BenchmarkCheckAWSCalls(b *testing.B) {
	for _, n := range []int{300, 3000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			fake := &scaleAWS{fakeAWS{calls: map[string]int{}}}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			awsEnv(b, srv.URL)
			nodes := make([]corev1.Node, n)
			for i := range nodes {
				nodes[i] = checktest.Node(fmt.Sprintf("n-%d", i), checktest.ProviderID(fmt.Sprintf("aws:///us-west-2a/i-%08d", i)))
			}
			calls, describe := 0, 0
			for b.Loop() {
				s := &check.Snapshot{Input: check.Input{AWSOptions: &check.AWSOptions{Region: "us-west-2"}}, Nodes: nodes}
				if err := collect(context.Background(), s); err != nil {
					b.Fatal(err)
				}
				if len(s.AWS.Instances) != n {
					b.Fatalf("%d instances read, want %d", len(s.AWS.Instances), n)
				}
				calls, describe = 0, s.AWS.Calls["ec2:DescribeInstances"]
				for _, c := range s.AWS.Calls {
					calls += c
				}
			}
			b.ReportMetric(float64(calls), "aws-calls/op")
			b.ReportMetric(float64(describe), "describe-instances/op")
		})
	}
}

// TestAWSProfiles: --aws-profile completes the profiles of both shared
// files, as the SDK names them (config's [profile X] is X).
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	cfg, creds := filepath.Join(dir, "config"), filepath.Join(dir, "credentials")
	if err := os.WriteFile(cfg, []byte("[default]\nregion = us-west-2\n[profile prod]\nsso_session = corp\n[sso-session corp]\nsso_region = us-east-1\n[services vpce]\nec2 =\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(creds, []byte("[CI]\naws_access_key_id = x\n[prod]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", cfg)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	if got := Profiles(); !slices.Equal(got, []string{"CI", "default", "prod"}) {
		t.Errorf("%q", got)
	}
}

// TestSharedFilesBounded: the AWS shared config and credentials files, the
// CA bundle and the web identity token are regular files of at most
// 64 MiB, or one error before the SDK reads them; --aws-profile's
// completion lists no profiles of them, and ends.
func TestSharedFilesBounded(t *testing.T) {
	for path, want := range safefiletest.Files(t) {
		for _, env := range []string{"AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CA_BUNDLE", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
			t.Run(env+" "+filepath.Base(path), func(t *testing.T) {
				dir := t.TempDir()
				t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
				t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
				t.Setenv(env, path)
				if err := checkSharedFiles(); err == nil || err.Error() != want && !strings.HasPrefix(err.Error(), want) {
					t.Errorf("%v, want %q", err, want)
				}
				if got := safefiletest.Within(t, "Profiles", Profiles); len(got) != 0 {
					t.Errorf("Profiles: %q", got)
				}
			})
		}
	}
	for _, none := range []string{filepath.Join(t.TempDir(), "none"), os.DevNull} {
		t.Setenv("AWS_CONFIG_FILE", none)
		if err := checkSharedFiles(); err != nil {
			t.Errorf("AWS_CONFIG_FILE=%s: %v", none, err)
		}
	}
}
