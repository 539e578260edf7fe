#!/usr/bin/env python3
"""moto's server as the AWS of the e2e tests, on a loopback port.

Starts moto's server (moto[server], the standard AWS emulator) after
patching the places where moto answers differently from AWS and a cloud
controller manager notices:

- A new Classic ELB has a HealthCheck in AWS (TCP to the first listener's
  instance port, 30 s interval, 5 s timeout, thresholds 10 healthy and 2
  unhealthy); moto's has none, and the AWS CCM dereferences it.
- DescribeInstanceTopology answers AWS's way for instances without a
  topology (most instance types): an empty list. moto does not implement
  it and fails with 500, which the AWS CCM (1.30+) retries with backoff and
  then logs as an error, for every node it initialises.
- An IAM denial is written in the envelope of the service's own protocol,
  which the Go SDKs parse: EC2 answers UnauthorizedOperation in
  <Response><Errors><Error>, the query services (ELB, ELBv2, IAM)
  AccessDenied in <ErrorResponse><Error>. moto writes
  <ErrorResponse><Errors><Error> for all of them.

and, for the reads of `check --aws`, adds what moto lacks and answers the
rest as AWS does:

- iam:SimulatePrincipalPolicy, which moto lacks, evaluates the user's,
  role's or group's identity policies with moto's own IAM policy
  evaluation (the one that enforces IAM here) and answers as IAM does:
  allowed, implicitDeny or explicitDeny per action and resource;
  NoSuchEntity for an unknown principal. It is itself subject to IAM.
- A new VPC has its region's default DHCP options set (domain-name
  REGION.compute.internal, ec2.internal in us-east-1; AmazonProvidedDNS),
  shared by the region's VPCs; moto's has none (DhcpOptionsId "default",
  DescribeDhcpOptions empty).
- ModifyInstanceMetadataOptions changes only the options it is given;
  moto resets the others (the hop limit to 1) or drops them.
- An instance's IamInstanceProfile.Id is its instance profile's ID (moto:
  the association's), and follows ReplaceIamInstanceProfileAssociation.
- A Classic ELB's DNSName is in its region (moto: always us-east-1).
- An ELBv2 load balancer's ARN names its type: loadbalancer/net/ for a
  network load balancer (moto: always app/).

and, for the AWS CCM's network load balancers:

- A target group of a Network Load Balancer's protocols (TCP, TLS, UDP,
  TCP_UDP) has the attributes AWS gives one (preserve_client_ip.enabled,
  proxy_protocol_v2.enabled, deregistration_delay.connection_termination
  .enabled, ...) and none of an Application Load Balancer's; moto gives
  every target group an ALB's (load_balancing.algorithm.type,
  slow_start.duration_seconds, waf.fail_open.enabled) and lacks the NLB's.
  The AWS CCM (v1.32.6, v1.33.3, v1.34.0, v1.34.2 and later) sets only the
  attributes of its Service's target-group-attributes annotation that
  DescribeTargetGroupAttributes lists, and skips the others without a
  word.
- A network load balancer's DNSName is NAME-ID.elb.REGION.amazonaws.com,
  as AWS names it; moto names every ELBv2 load balancer as an ALB
  (NAME-1.REGION.elb.amazonaws.com). The AWS CCM v1.37 takes a Service's
  hostname ending in .elb.amazonaws.com for a Classic ELB's and refuses to
  sync the Service of an NLB with such a name again ("cannot update Load
  Balancer Type annotation ... after creation for NLB",
  pkg/providers/v1/aws_validations.go).

A self-check through the server's own HTTP port proves the patches before
the server is announced, and fails the start when the installed moto is not
the release they were written for.

The server also records every AWS request it answers (who signed it, which
service and action, the status and error code) and serves the records and a
call interface for the tests:

  GET  /e2e/requests   the records, oldest first, as JSON (the calls below
                       marked "admin")
  POST /e2e/call       {"service": "ec2", "action": "DescribeInstances",
                        "params": {...}} runs the action with boto3 against
                        this server as an administrator (an IAM user with
                        every permission, so it works while IAM is enforced)
                        and answers its result as JSON

IAM is enforced as moto enforces it: after INITIAL_NO_AUTH_ACTION_COUNT
requests (environment; default never), or from a POST of a number to
/moto-api/reset-auth.

Once ready it prints one line to stdout:
  moto VERSION listening on http://127.0.0.1:PORT
With --check it only checks that the supported moto and its server's
packages are installed (the Makefile's check before the e2e tests).
"""

import argparse
import io
import json
import logging
import os
import re
import sys
import threading
import time
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

# The release the patches below were written against. Another one fails the
# start: its internals may have moved, and the self-check would say why
# later and less clearly.
SUPPORTED_MOTO = "5.2.1"

# The administrator the call interface signs as.
ADMIN_USER = "e2e-admin"
ACCOUNT_ID = "123456789012"  # moto's default account

# The trust policy of a role for EC2 instances.
EC2_TRUST = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}

# AWS's own defaults for a Classic ELB created without a health check.
DEFAULT_HEALTH_CHECK = dict(interval="30", timeout="5", healthy_threshold="10", unhealthy_threshold="2")


def fail(msg):
    print("moto launcher: " + msg, file=sys.stderr, flush=True)
    sys.exit(3)


def check_installed():
    """Fails unless moto SUPPORTED_MOTO and its server's packages import;
    returns the version."""
    from importlib import metadata

    install = "pip install 'moto[server]==%s'" % SUPPORTED_MOTO
    try:
        version = metadata.version("moto")
        import moto  # noqa: F401
    except (metadata.PackageNotFoundError, ImportError):
        fail("moto is not installed (the e2e tests run its server as their AWS): " + install)
    if version != SUPPORTED_MOTO:
        fail("moto %s is installed; e2e/moto/server.py is written for moto %s: %s" % (version, SUPPORTED_MOTO, install))
    try:
        import flask  # noqa: F401
        import flask_cors  # noqa: F401
        import moto.moto_server.werkzeug_app  # noqa: F401
    except ImportError as e:
        fail("moto's server is not installed (%s): %s" % (e, install))
    return version


def patch_moto():
    """Patches moto in this process; see the module's docstring."""
    from moto.core.exceptions import _RESTError
    from moto.elb import models as elb_models
    from moto.iam import access_control

    original_init = elb_models.LoadBalancer.__init__

    def init_with_health_check(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        if self.health_check is None and self.listeners:
            self.health_check = elb_models.FakeHealthCheck(
                target="TCP:%s" % self.listeners[0].instance_port, **DEFAULT_HEALTH_CHECK
            )

    elb_models.LoadBalancer.__init__ = init_with_health_check

    def in_service_envelope(method):
        def raise_in_envelope(self, *args, **kwargs):
            try:
                method(self, *args, **kwargs)
            except _RESTError as e:
                rewrite_envelope(e, self._service)
                raise

        return raise_in_envelope

    from moto.core.responses import ActionResult
    from moto.ec2.responses import EC2Response

    if hasattr(EC2Response, "describe_instance_topology"):
        raise AttributeError("EC2Response has describe_instance_topology of its own")

    def describe_instance_topology(self):
        return ActionResult({"Instances": []})

    EC2Response.describe_instance_topology = describe_instance_topology

    for name in ("_raise_access_denied", "_raise_signature_does_not_match", "_raise_invalid_access_key"):
        setattr(access_control.IAMRequest, name, in_service_envelope(getattr(access_control.IAMRequest, name)))

    from moto.iam.responses import IamResponse

    if hasattr(IamResponse, "simulate_principal_policy"):
        raise AttributeError("IamResponse has simulate_principal_policy of its own")
    IamResponse.simulate_principal_policy = simulate_principal_policy

    patch_reads()
    patch_nlb_target_groups()


# The attributes AWS gives a new target group of a Network Load Balancer
# (docs.aws.amazon.com/elasticloadbalancing/latest/network/
# target-group-attributes.html), but preserve_client_ip.enabled, which
# nlb_target_group_attributes sets by target type and protocol.
NLB_TARGET_GROUP_ATTRIBUTES = {
    "deregistration_delay.timeout_seconds": "300",
    "deregistration_delay.connection_termination.enabled": "false",
    "load_balancing.cross_zone.enabled": "use_load_balancer_configuration",
    "proxy_protocol_v2.enabled": "false",
    "stickiness.enabled": "false",
    "stickiness.type": "source_ip",
    "target_group_health.dns_failover.minimum_healthy_targets.count": "1",
    "target_group_health.dns_failover.minimum_healthy_targets.percentage": "off",
    "target_group_health.unhealthy_state_routing.minimum_healthy_targets.count": "1",
    "target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage": "off",
    "target_health_state.unhealthy.connection_termination.enabled": "true",
    "target_health_state.unhealthy.draining_interval_seconds": "0",
}

NLB_PROTOCOLS = ("TCP", "TLS", "UDP", "TCP_UDP")


def nlb_target_group_attributes(target_type, protocol):
    """A new NLB target group's attributes, as AWS gives them: client IP
    preservation on for instance targets and for UDP and TCP_UDP, off for
    IP targets of TCP and TLS."""
    attrs = dict(NLB_TARGET_GROUP_ATTRIBUTES)
    preserve = target_type == "instance" or protocol in ("UDP", "TCP_UDP")
    attrs["preserve_client_ip.enabled"] = "true" if preserve else "false"
    return attrs


def patch_nlb_target_groups():
    """A target group of an NLB's protocols has an NLB target group's
    attributes (the module's docstring)."""
    from moto.elbv2 import models as elbv2_models

    init = elbv2_models.FakeTargetGroup.__init__

    def init_with_nlb_attributes(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if self.protocol in NLB_PROTOCOLS and self.target_type in ("instance", "ip"):
            self.attributes = nlb_target_group_attributes(self.target_type, self.protocol)

    elbv2_models.FakeTargetGroup.__init__ = init_with_nlb_attributes


def patch_reads():
    """Patches what moto answers differently from AWS in the reads of
    `check --aws` (the module's docstring lists them)."""
    import contextvars
    import random

    from moto.ec2.models.iam_instance_profile import IamInstanceProfileAssociation, IamInstanceProfileAssociationBackend
    from moto.ec2.models.instances import InstanceBackend
    from moto.ec2.models.vpcs import VPCBackend
    from moto.elb.models import ELBBackend
    from moto.elbv2 import models as elbv2_models

    # A VPC is created with its region's default DHCP options set (one per
    # region, shared, kept when a VPC is deleted), not with none.
    create_vpc, delete_vpc = VPCBackend.create_vpc, VPCBackend.delete_vpc

    def create_vpc_with_dhcp_options(self, *args, **kwargs):
        vpc = create_vpc(self, *args, **kwargs)
        self.associate_dhcp_options(default_dhcp_options(self), vpc)
        return vpc

    def delete_vpc_keeping_dhcp_options(self, vpc_id):
        shared = getattr(self, "e2e_default_dhcp_options", None)
        vpc = self.vpcs.get(vpc_id)
        if shared is not None and vpc is not None and vpc.dhcp_options is shared:
            vpc.dhcp_options = None  # moto deletes the set of a deleted VPC
            out = delete_vpc(self, vpc_id)
            shared.vpc = next((v for v in self.vpcs.values() if v.dhcp_options is shared), None)
            return out
        return delete_vpc(self, vpc_id)

    VPCBackend.create_vpc = create_vpc_with_dhcp_options
    VPCBackend.delete_vpc = delete_vpc_keeping_dhcp_options

    # ModifyInstanceMetadataOptions changes the options it is given and
    # keeps the others; moto resets those to their defaults or drops them.
    modify_metadata = InstanceBackend.modify_instance_metadata_options

    def modify_given_metadata_options(
        self, instance_id, http_tokens=None, hop_limit=None, http_endpoint=None, dry_run=False, http_protocol=None, metadata_tags=None
    ):
        current = self.get_instance(instance_id).metadata_options
        return modify_metadata(
            self,
            instance_id,
            http_tokens=http_tokens if http_tokens is not None else current.http_tokens,
            hop_limit=hop_limit if hop_limit is not None else current.http_put_response_hop_limit,
            http_endpoint=http_endpoint if http_endpoint is not None else current.http_endpoint,
            dry_run=dry_run,
            http_protocol=http_protocol if http_protocol is not None else current.http_protocol_ipv6,
            metadata_tags=metadata_tags if metadata_tags is not None else current.instance_metadata_tags,
        )

    InstanceBackend.modify_instance_metadata_options = modify_given_metadata_options

    # An instance's IamInstanceProfile is {Arn, Id} of its instance profile
    # (moto gives the association's ID), also after
    # ReplaceIamInstanceProfileAssociation (moto keeps the old profile).
    def show_profile(association):
        association.ec2_backend.modify_instance_attribute(
            association.instance_id,
            "iam_instance_profile",
            {"Arn": association.iam_instance_profile.arn, "Id": association.iam_instance_profile.id},
        )

    association_init = IamInstanceProfileAssociation.__init__
    replace_association = IamInstanceProfileAssociationBackend.replace_iam_instance_profile_association

    def init_showing_profile(self, *args, **kwargs):
        association_init(self, *args, **kwargs)
        show_profile(self)

    def replace_showing_profile(self, *args, **kwargs):
        association = replace_association(self, *args, **kwargs)
        show_profile(association)
        return association

    IamInstanceProfileAssociation.__init__ = init_showing_profile
    IamInstanceProfileAssociationBackend.replace_iam_instance_profile_association = replace_showing_profile

    # A Classic ELB's DNSName is in its own region, as AWS names it
    # ([internal-]NAME-NUMBER.REGION.elb.amazonaws.com); moto's is always in
    # us-east-1.
    create_elb = ELBBackend.create_load_balancer

    def create_elb_named_in_region(self, name, *args, **kwargs):
        lb = create_elb(self, name, *args, **kwargs)
        prefix = "internal-" if lb.scheme == "internal" else ""
        lb.dns_name = "%s%s-%d.%s.elb.amazonaws.com" % (prefix, name, random.randrange(10**9, 10**10), self.region_name)
        return lb

    ELBBackend.create_load_balancer = create_elb_named_in_region

    # An ELBv2 load balancer's ARN names its type: loadbalancer/app/,
    # loadbalancer/net/ or loadbalancer/gwy/; moto's always says app/.
    lb_type = contextvars.ContextVar("lb_type", default=None)
    create_elbv2 = elbv2_models.ELBv2Backend.create_load_balancer
    make_arn = elbv2_models.make_arn_for_load_balancer

    def create_elbv2_typed(self, *args, **kwargs):
        token = lb_type.set(kwargs.get("loadbalancer_type"))
        try:
            lb = create_elbv2(self, *args, **kwargs)
        finally:
            lb_type.reset(token)
        if kwargs.get("loadbalancer_type") == "network" and lb.dns_name.endswith(".%s.elb.amazonaws.com" % self.region_name):
            lb.dns_name = nlb_dns_name(lb.name, self.region_name)
        return lb

    def make_typed_arn(**kwargs):
        arn = make_arn(**kwargs)
        kind = {"network": "net", "gateway": "gwy"}.get(lb_type.get())
        return arn.replace(":loadbalancer/app/", ":loadbalancer/%s/" % kind, 1) if kind else arn

    elbv2_models.ELBv2Backend.create_load_balancer = create_elbv2_typed
    elbv2_models.make_arn_for_load_balancer = make_typed_arn


def nlb_dns_name(name, region):
    """A network load balancer's DNS name as AWS gives it:
    NAME-<16 hex digits>.elb.REGION.amazonaws.com."""
    import random

    return "%s-%016x.elb.%s.amazonaws.com" % (name, random.getrandbits(64), region)


def default_domain_name(region):
    """The domain-name of a region's default DHCP options set."""
    return "ec2.internal" if region == "us-east-1" else region + ".compute.internal"


def default_dhcp_options(backend):
    """The region's default DHCP options set, as AWS has it in every region:
    domain-name REGION.compute.internal (ec2.internal in us-east-1), the
    Amazon-provided DNS."""
    shared = getattr(backend, "e2e_default_dhcp_options", None)
    if shared is None or shared.id not in backend.dhcp_options_sets:
        domain = default_domain_name(backend.region_name)
        shared = backend.create_dhcp_options(domain_name_servers=["AmazonProvidedDNS"], domain_name=[domain])
        backend.e2e_default_dhcp_options = shared
    return shared


def simulate_principal_policy(self):
    """iam:SimulatePrincipalPolicy, which moto lacks: the principal's identity
    policies, as moto's enforcement collects them, evaluated by moto's own
    IAM policy evaluation (access_control.IAMPolicy), combined as its
    enforcement combines them (IAMRequest.check_action_permitted): a Deny
    that matches wins (explicitDeny), else an Allow that matches
    (allowed), else implicitDeny. One result per action and resource
    (ResourceArns; default "*"), as AWS answers, with the statements that
    decided it (SourcePolicyId: the policy's name; no positions), in pages
    (MaxItems, Marker). Condition keys, permissions boundaries and
    resource policies are not simulated. Called like any other action, so
    it is itself subject to IAM enforcement (iam:SimulatePrincipalPolicy)."""
    from moto.core.responses import ActionResult
    from moto.iam.access_control import IAMPolicy, IAMPolicyStatement, PermissionResult

    arn = self._get_param("PolicySourceArn") or ""
    actions = self._get_param("ActionNames") or []
    resources = self._get_param("ResourceArns") or ["*"]
    if not actions:
        raise_iam("InvalidInput", "ActionNames must not be empty.")
    policies = principal_policies(self.backend, arn)
    results = []
    for action in actions:
        for resource in resources:
            decided = {PermissionResult.DENIED: False, PermissionResult.PERMITTED: False}
            for _, _, policy in policies:
                result = IAMPolicy(policy).is_action_permitted(action, resource)
                if result in decided:
                    decided[result] = True
            if decided[PermissionResult.DENIED]:
                decision, deciding = "explicitDeny", PermissionResult.DENIED
            elif decided[PermissionResult.PERMITTED]:
                decision, deciding = "allowed", PermissionResult.PERMITTED
            else:
                decision, deciding = "implicitDeny", None
            matched = []
            for source_id, source_type, policy in policies:
                statements = IAMPolicy(policy)._policy_json["Statement"]
                for statement in statements if isinstance(statements, list) else [statements]:
                    if deciding and IAMPolicyStatement(statement).is_action_permitted(action, resource) == deciding:
                        matched.append({"SourcePolicyId": source_id, "SourcePolicyType": source_type})
            results.append(
                {
                    "EvalActionName": action,
                    "EvalResourceName": resource,
                    "EvalDecision": decision,
                    "MatchedStatements": matched,
                    "MissingContextValues": [],
                }
            )
    # Pages of MaxItems results (default 100, as IAM's), the Marker where
    # the next one starts.
    try:
        start = int(self._get_param("Marker") or 0)
    except ValueError:
        raise_iam("InvalidInput", "Invalid Marker.")
    end = start + int(self._get_param("MaxItems") or 100)
    page = {"EvaluationResults": results[start:end], "IsTruncated": end < len(results)}
    if page["IsTruncated"]:
        page["Marker"] = str(end)
    return ActionResult(page)


def principal_policies(backend, arn):
    """The identity policies of the user, role or group at arn, each as
    (SourcePolicyId, SourcePolicyType, policy for access_control.IAMPolicy):
    what moto's enforcement collects for a user's or an assumed role's key
    (IAMUserAccessKey, AssumedRoleAccessKey.collect_policies)."""
    m = re.match(r"^arn:[^:]+:iam::\d{12}:(user|role|group)/(?:[^/]+/)*([^/]+)$", arn)
    if not m:
        raise_iam("InvalidInput", "Invalid ARN: %s; PolicySourceArn must be the ARN of a user, group or role." % arn)
    kind, name = m.groups()
    out = []

    def managed(policies):
        for p in policies:
            out.append((p.name, "aws-managed" if ":iam::aws:policy/" in p.arn else "user-managed", p))

    def group_policies(group):
        for policy_name in backend.list_group_policies(group.name):
            out.append((policy_name, "group", backend.get_group_policy(group.name, policy_name)))
        managed(backend.list_attached_group_policies(group.name)[0])

    if kind == "role":
        role = next((r for r in backend.get_roles() if r.arn == arn), None)
        if role is None:
            raise_iam("NoSuchEntity", "The role with name %s cannot be found." % name)
        for policy_name in backend.list_role_policies(role.name):
            out.append((policy_name, "role", backend.get_role_policy(role.name, policy_name)[1]))
        managed(backend.list_attached_role_policies(role.name)[0])
    elif kind == "user":
        user = next((u for u in backend.list_users("/", None, None) if u.arn == arn), None)
        if user is None:
            raise_iam("NoSuchEntity", "The user with name %s cannot be found." % name)
        for policy_name in backend.list_user_policies(user.name):
            out.append((policy_name, "user", backend.get_user_policy(user.name, policy_name)))
        managed(backend.list_attached_user_policies(user.name)[0])
        for group in backend.get_groups_for_user(user.name):
            group_policies(group)
    else:
        group = next((g for g in backend.list_groups() if g.arn == arn), None)
        if group is None:
            raise_iam("NoSuchEntity", "The group with name %s cannot be found." % name)
        group_policies(group)
    return out


def raise_iam(code, message):
    """Raises an IAM error, which moto answers in IAM's error envelope."""
    from moto.iam import exceptions

    raise {"InvalidInput": exceptions.InvalidInput, "NoSuchEntity": exceptions.NoSuchEntity}[code](message)


def rewrite_envelope(err, service):
    """Writes an authentication or authorization error as the service does."""
    request_id = "e2e-%d" % time.monotonic_ns()
    code, message = err.error_type, err.message
    if service == "ec2":
        if code == "AccessDenied":
            code = "UnauthorizedOperation"
            message = "You are not authorized to perform this operation. " + message
        err.description = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>%s</Code><Message>%s</Message>'
            "</Error></Errors><RequestID>%s</RequestID></Response>" % (escape(code), escape(message), request_id)
        )
    else:
        err.description = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code>'
            "<Message>%s</Message></Error><RequestId>%s</RequestId></ErrorResponse>"
            % (escape(code), escape(message), request_id)
        )
    err.error_type = code
    err.message = message


class Recorder:
    """WSGI middleware: records the AWS requests, serves /e2e/."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.records = []
        self.caller = None  # set once the server listens

    def clear(self):
        with self.lock:
            self.records = []

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.startswith("/e2e/"):
            return self.serve(path, environ, start_response)
        if path.startswith("/moto-api"):
            return self.app(environ, start_response)
        body = b""
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length:
            body = environ["wsgi.input"].read(length)
            environ["wsgi.input"] = io.BytesIO(body)
        rec = describe_request(environ, body)
        rec["admin"] = self.caller is not None and rec["accessKey"] == self.caller.key[0]
        status = []

        def recording_start_response(st, headers, exc_info=None):
            status.append(st)
            return start_response(st, headers, exc_info)

        try:
            chunks = list(self.app(environ, recording_start_response))
        except Exception as e:  # werkzeug answers 500
            rec.update(status=500, error=type(e).__name__)
            self.append(rec)
            raise
        rec["status"] = int(status[0].split()[0]) if status else 0
        if rec["status"] >= 400:
            rec["error"] = error_code(b"".join(chunks))
        self.append(rec)
        return chunks

    def append(self, rec):
        with self.lock:
            rec["seq"] = len(self.records) + 1
            self.records.append(rec)

    def serve(self, path, environ, start_response):
        try:
            if path == "/e2e/requests" and environ["REQUEST_METHOD"] == "GET":
                with self.lock:
                    out = list(self.records)
                return respond(start_response, "200 OK", out)
            if path == "/e2e/call" and environ["REQUEST_METHOD"] == "POST":
                length = int(environ.get("CONTENT_LENGTH") or 0)
                req = json.loads(environ["wsgi.input"].read(length) or b"{}")
                return respond(start_response, "200 OK", self.caller.call(req["service"], req["action"], req.get("params") or {}))
            return respond(start_response, "404 Not Found", {"error": "no such e2e endpoint: " + path})
        except Exception as e:  # the caller shows it; the server goes on
            code = getattr(e, "response", {}).get("Error", {}).get("Code", type(e).__name__)
            return respond(start_response, "400 Bad Request", {"error": str(e), "code": code})


def respond(start_response, status, obj):
    data = json.dumps(obj, default=str).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


def describe_request(environ, body):
    """Who signed a request, for which service and action."""
    auth = environ.get("HTTP_AUTHORIZATION", "")
    key = service = region = ""
    if "Credential=" in auth:
        scope = auth.split("Credential=", 1)[1].split(",", 1)[0].split("/")
        if len(scope) >= 4:
            key, region, service = scope[0], scope[2], scope[3]
    action = ""
    if environ.get("HTTP_X_AMZ_TARGET"):
        action = environ["HTTP_X_AMZ_TARGET"].rsplit(".", 1)[-1]
    else:
        for source in (body.decode("utf-8", "replace"), environ.get("QUERY_STRING", "")):
            values = urllib.parse.parse_qs(source).get("Action")
            if values:
                action = values[0]
                break
    return {
        "time": time.time(),
        "accessKey": key,
        "service": service,
        "region": region,
        "action": action,
        "userAgent": environ.get("HTTP_USER_AGENT", ""),
    }


def error_code(body):
    """The error code of an XML or JSON error body."""
    try:
        for el in ET.fromstring(body).iter():
            if el.tag.rsplit("}", 1)[-1] == "Code":
                return el.text or ""
    except ET.ParseError:
        pass
    try:
        return json.loads(body).get("__type", "").rsplit("#", 1)[-1]
    except (ValueError, AttributeError):
        return ""


class Caller:
    """boto3 against this server, signed as the administrator."""

    def __init__(self, url, region):
        self.url, self.region = url, region
        self.key = ("e2e", "e2e")  # until the administrator exists: IAM is not enforced then
        self.clients = {}
        self.lock = threading.Lock()

    def client(self, service):
        import boto3
        from botocore.config import Config

        with self.lock:
            c = self.clients.get((service, self.key))
            if c is None:
                c = boto3.session.Session().client(
                    service,
                    endpoint_url=self.url,
                    region_name=self.region,
                    aws_access_key_id=self.key[0],
                    aws_secret_access_key=self.key[1],
                    config=Config(retries={"max_attempts": 1}),
                )
                self.clients[(service, self.key)] = c
            return c

    def call(self, service, action, params):
        from botocore import xform_name

        out = getattr(self.client(service), xform_name(action))(**params)
        out.pop("ResponseMetadata", None)
        return out

    def become_admin(self):
        iam = self.client("iam")
        iam.create_user(UserName=ADMIN_USER)
        iam.put_user_policy(
            UserName=ADMIN_USER,
            PolicyName="everything",
            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}),
        )
        k = iam.create_access_key(UserName=ADMIN_USER)["AccessKey"]
        self.key = (k["AccessKeyId"], k["SecretAccessKey"])


def post(url, data, content_type="text/plain"):
    req = urllib.request.Request(url, data=data, method="POST", headers={"Content-Type": content_type})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.read()


def signed(url, region, service, key, params):
    """A raw SigV4-signed query request; returns (status, parsed XML root)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    body = urllib.parse.urlencode(params)
    req = AWSRequest(method="POST", url=url + "/", data=body, headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
    SigV4Auth(Credentials(*key), service, region).add_auth(req)
    r = urllib.request.Request(url + "/", data=body.encode(), method="POST", headers=dict(req.headers.items()))
    try:
        with urllib.request.urlopen(r, timeout=30) as resp:
            return resp.status, ET.fromstring(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, ET.fromstring(e.read())


def self_check(url, region, caller):
    """Proves the patches through the server itself; raises on a gap."""
    from botocore.exceptions import ClientError

    elb = caller.client("elb")
    elb.create_load_balancer(
        LoadBalancerName="self-check",
        Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 80, "InstancePort": 30080}],
        AvailabilityZones=[region + "a"],
    )
    hc = elb.describe_load_balancers(LoadBalancerNames=["self-check"])["LoadBalancerDescriptions"][0].get("HealthCheck")
    if not hc or hc.get("Target") != "TCP:30080" or hc.get("Interval") != 30:
        raise AssertionError("a new Classic ELB has no default health check: %r" % (hc,))

    dns = elb.describe_load_balancers(LoadBalancerNames=["self-check"])["LoadBalancerDescriptions"][0]["DNSName"]
    if not re.match(r"^self-check-\d+\.%s\.elb\.amazonaws\.com$" % re.escape(region), dns):
        raise AssertionError("a Classic ELB's DNSName is not in its region: %s" % dns)

    ec2 = caller.client("ec2")
    topology = ec2.describe_instance_topology(InstanceIds=["i-0123456789abcdef0"])
    if topology.get("Instances") != []:
        raise AssertionError("DescribeInstanceTopology: %r" % (topology,))

    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    dopt = ec2.describe_vpcs(VpcIds=[vpc])["Vpcs"][0].get("DhcpOptionsId", "")
    gone = ec2.create_vpc(CidrBlock="10.8.0.0/16")["Vpc"]["VpcId"]
    ec2.delete_vpc(VpcId=gone)  # keeps the shared set
    sets = ec2.describe_dhcp_options(DhcpOptionsIds=[dopt])["DhcpOptions"] if dopt.startswith("dopt-") else []
    conf = {c["Key"]: [v["Value"] for v in c["Values"]] for o in sets for c in o["DhcpConfigurations"]}
    if conf.get("domain-name") != [default_domain_name(region)] or conf.get("domain-name-servers") != ["AmazonProvidedDNS"]:
        raise AssertionError("a new VPC's DHCP options (%s): %r" % (dopt, conf))

    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24", AvailabilityZone=region + "a")["Subnet"]["SubnetId"]
    iam = caller.client("iam")
    iam.create_role(RoleName="self-check", AssumeRolePolicyDocument=json.dumps(EC2_TRUST))
    profile = iam.create_instance_profile(InstanceProfileName="self-check")["InstanceProfile"]
    iam.add_role_to_instance_profile(InstanceProfileName="self-check", RoleName="self-check")
    instance = ec2.run_instances(
        ImageId="ami-self-check", MinCount=1, MaxCount=1, SubnetId=subnet, IamInstanceProfile={"Arn": profile["Arn"]},
        MetadataOptions={"HttpTokens": "required", "HttpPutResponseHopLimit": 1},
    )["Instances"][0]["InstanceId"]
    ec2.modify_instance_metadata_options(InstanceId=instance, HttpPutResponseHopLimit=2)
    described = ec2.describe_instances(InstanceIds=[instance])["Reservations"][0]["Instances"][0]
    md = {k: described.get("MetadataOptions", {}).get(k) for k in ("HttpTokens", "HttpPutResponseHopLimit", "HttpEndpoint")}
    if md != {"HttpTokens": "required", "HttpPutResponseHopLimit": 2, "HttpEndpoint": "enabled"}:
        raise AssertionError("metadata options after RunInstances (required, 1) and a new hop limit (2): %r" % (md,))
    if described.get("IamInstanceProfile") != {"Arn": profile["Arn"], "Id": profile["InstanceProfileId"]}:
        raise AssertionError("an instance's IamInstanceProfile: %r, want %s" % (described.get("IamInstanceProfile"), profile))
    other = iam.create_instance_profile(InstanceProfileName="self-check-other")["InstanceProfile"]
    associations = ec2.describe_iam_instance_profile_associations()["IamInstanceProfileAssociations"]
    association = next(a["AssociationId"] for a in associations if a["InstanceId"] == instance)
    ec2.replace_iam_instance_profile_association(AssociationId=association, IamInstanceProfile={"Arn": other["Arn"]})
    shown = ec2.describe_instances(InstanceIds=[instance])["Reservations"][0]["Instances"][0].get("IamInstanceProfile")
    if shown != {"Arn": other["Arn"], "Id": other["InstanceProfileId"]}:
        raise AssertionError("an instance's IamInstanceProfile after a replacement: %r, want %s" % (shown, other))

    elbv2 = caller.client("elbv2")
    nlb = elbv2.create_load_balancer(Name="self-check", Subnets=[subnet], Type="network")["LoadBalancers"][0]
    if ":loadbalancer/net/self-check/" not in nlb["LoadBalancerArn"]:
        raise AssertionError("a network load balancer's ARN: %s" % nlb["LoadBalancerArn"])
    if not re.match(r"^self-check-[0-9a-f]{16}\.elb\.%s\.amazonaws\.com$" % re.escape(region), nlb["DNSName"]):
        raise AssertionError("a network load balancer's DNSName: %s" % nlb["DNSName"])
    alb = elbv2.create_load_balancer(Name="self-check-alb", Subnets=[subnet])["LoadBalancers"][0]
    if not alb["DNSName"].endswith(".%s.elb.amazonaws.com" % region):
        raise AssertionError("an application load balancer's DNSName: %s" % alb["DNSName"])
    check_target_group_attributes(elbv2, vpc)

    role = "arn:aws:iam::%s:role/self-check" % ACCOUNT_ID
    iam.put_role_policy(
        RoleName="self-check",
        PolicyName="self-check",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {"Effect": "Allow", "Action": "ec2:DescribeInstances", "Resource": "*"},
                    {"Effect": "Deny", "Action": "ec2:TerminateInstances", "Resource": "*"},
                ],
            }
        ),
    )
    simulated = iam.simulate_principal_policy(
        PolicySourceArn=role, ActionNames=["ec2:DescribeInstances", "ec2:DescribeAvailabilityZones", "ec2:TerminateInstances"]
    )["EvaluationResults"]
    decisions = [(r["EvalActionName"], r["EvalResourceName"], r["EvalDecision"]) for r in simulated]
    want = [
        ("ec2:DescribeInstances", "*", "allowed"),
        ("ec2:DescribeAvailabilityZones", "*", "implicitDeny"),
        ("ec2:TerminateInstances", "*", "explicitDeny"),
    ]
    if decisions != want:
        raise AssertionError("SimulatePrincipalPolicy: %r, want %r" % (decisions, want))
    pages = iam.get_paginator("simulate_principal_policy").paginate(
        PolicySourceArn=role, ActionNames=[a for a, _, _ in want], PaginationConfig={"PageSize": 2}
    )
    paged = [[r["EvalDecision"] for r in p["EvaluationResults"]] for p in pages]
    if paged != [["allowed", "implicitDeny"], ["explicitDeny"]]:
        raise AssertionError("SimulatePrincipalPolicy in pages of 2: %r" % (paged,))
    try:
        iam.simulate_principal_policy(PolicySourceArn=role + "-missing", ActionNames=["ec2:DescribeInstances"])
    except ClientError as e:
        if e.response["Error"]["Code"] != "NoSuchEntity" or e.response["ResponseMetadata"]["HTTPStatusCode"] != 404:
            raise AssertionError("SimulatePrincipalPolicy of an unknown role: %r" % (e.response,))
    else:
        raise AssertionError("SimulatePrincipalPolicy of an unknown role succeeded")

    iam.create_user(UserName="self-check")
    k = iam.create_access_key(UserName="self-check")["AccessKey"]
    key = (k["AccessKeyId"], k["SecretAccessKey"])
    post(url + "/moto-api/reset-auth", b"0")
    try:
        status, root = signed(url, region, "ec2", key, {"Action": "DescribeInstances", "Version": "2016-11-15"})
        code = root.findtext("./Errors/Error/Code")
        if status != 403 or root.tag != "Response" or code != "UnauthorizedOperation":
            raise AssertionError("EC2 denial: status %d, %s" % (status, ET.tostring(root).decode()))
        status, root = signed(url, region, "elasticloadbalancing", key, {"Action": "DescribeLoadBalancers", "Version": "2012-06-01"})
        code = root.findtext("./Error/Code")
        if status != 403 or root.tag != "ErrorResponse" or code != "AccessDenied":
            raise AssertionError("ELB denial: status %d, %s" % (status, ET.tostring(root).decode()))
        simulate = {"Action": "SimulatePrincipalPolicy", "Version": "2010-05-08", "PolicySourceArn": role}
        simulate["ActionNames.member.1"] = "ec2:DescribeInstances"
        status, root = signed(url, region, "iam", key, simulate)
        code = root.findtext("./Error/Code")
        if status != 403 or root.tag != "ErrorResponse" or code != "AccessDenied":
            raise AssertionError("SimulatePrincipalPolicy denial: status %d, %s" % (status, ET.tostring(root).decode()))
        try:
            caller.client("ec2").describe_instances()
        except ClientError:
            pass
        else:
            raise AssertionError("IAM is not enforced after reset-auth")
    finally:
        post(url + "/moto-api/reset-auth", b"inf")


def check_target_group_attributes(elbv2, vpc):
    """Proves patch_nlb_target_groups: an NLB target group's attributes by
    target type, set as ModifyTargetGroupAttributes says; an ALB target
    group's as moto had them."""

    def attributes(name, **kwargs):
        arn = elbv2.create_target_group(Name=name, VpcId=vpc, Port=30080, **kwargs)["TargetGroups"][0]["TargetGroupArn"]
        return arn, {a["Key"]: a["Value"] for a in elbv2.describe_target_group_attributes(TargetGroupArn=arn)["Attributes"]}

    arn, tcp = attributes("self-check-tcp", Protocol="TCP", TargetType="instance")
    if tcp != nlb_target_group_attributes("instance", "TCP") or tcp["preserve_client_ip.enabled"] != "true":
        raise AssertionError("an NLB target group's attributes (TCP, instance): %r" % (tcp,))
    _, ip = attributes("self-check-ip", Protocol="TCP", TargetType="ip")
    if ip.get("preserve_client_ip.enabled") != "false" or "load_balancing.algorithm.type" in ip:
        raise AssertionError("an NLB target group's attributes (TCP, ip): %r" % (ip,))
    _, udp = attributes("self-check-udp", Protocol="UDP", TargetType="ip")
    if udp.get("preserve_client_ip.enabled") != "true":
        raise AssertionError("an NLB target group's attributes (UDP, ip): %r" % (udp,))
    _, http = attributes("self-check-http", Protocol="HTTP", TargetType="instance")
    if "preserve_client_ip.enabled" in http or http.get("load_balancing.algorithm.type") != "round_robin":
        raise AssertionError("an ALB target group's attributes (HTTP): %r" % (http,))
    elbv2.modify_target_group_attributes(
        TargetGroupArn=arn,
        Attributes=[{"Key": "proxy_protocol_v2.enabled", "Value": "true"}, {"Key": "preserve_client_ip.enabled", "Value": "false"}],
    )
    got = {a["Key"]: a["Value"] for a in elbv2.describe_target_group_attributes(TargetGroupArn=arn)["Attributes"]}
    if got != dict(tcp, **{"proxy_protocol_v2.enabled": "true", "preserve_client_ip.enabled": "false"}):
        raise AssertionError("an NLB target group's attributes after ModifyTargetGroupAttributes: %r" % (got,))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="loopback port (0: any free one)")
    parser.add_argument("--region", default="us-west-2", help="region of the call interface")
    parser.add_argument("--check", action="store_true", help="only check that the supported moto and its server are installed")
    args = parser.parse_args()
    version = check_installed()
    if args.check:
        print("moto %s with its server: installed" % version)
        return

    # Everything this process sends goes to itself.
    for v in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        os.environ.pop(v, None)
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
    no_auth = os.environ.get("INITIAL_NO_AUTH_ACTION_COUNT", "inf")

    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server

    try:
        patch_moto()
    except (AttributeError, ImportError) as e:
        fail("moto %s no longer has what the patches change: %s" % (version, e))

    # The records say who asked what; the log keeps warnings and errors.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    recorder = Recorder(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", args.port, recorder, threaded=True)
    url = "http://127.0.0.1:%d" % server.server_port
    threading.Thread(target=server.serve_forever, daemon=True).start()

    recorder.caller = Caller(url, args.region)
    try:
        self_check(url, args.region, recorder.caller)
    except Exception as e:
        fail("self-check failed, the patches do not work on moto %s: %s" % (version, e))
    post(url + "/moto-api/reset", b"")
    recorder.caller = Caller(url, args.region)
    recorder.caller.become_admin()
    post(url + "/moto-api/reset-auth", no_auth.encode())
    recorder.clear()

    print("moto %s listening on %s" % (version, url), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    main()
