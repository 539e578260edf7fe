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

    topology = caller.client("ec2").describe_instance_topology(InstanceIds=["i-0123456789abcdef0"])
    if topology.get("Instances") != []:
        raise AssertionError("DescribeInstanceTopology: %r" % (topology,))

    iam = caller.client("iam")
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
        try:
            caller.client("ec2").describe_instances()
        except ClientError:
            pass
        else:
            raise AssertionError("IAM is not enforced after reset-auth")
    finally:
        post(url + "/moto-api/reset-auth", b"inf")


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
