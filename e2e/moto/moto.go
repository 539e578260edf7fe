// Package moto runs moto's server (the AWS emulator, Python) as the AWS of
// the e2e tests, on a loopback port, through the launcher beside this file
// (server.py: it patches moto where it answers differently from AWS and
// proves the patches at start), and drives it: AWS calls as an
// administrator, the cluster's network and instances, IAM users with their
// own access keys and policies, IAM enforcement, and the record of every
// request the server answered, per access key.
package moto

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/e2e/harness/spawn"
)

// Install says how to install moto; the launcher pins the release it is
// written for (SUPPORTED_MOTO in server.py), refuses another, and names it
// in its own message (`python3 e2e/moto/server.py --check`, the Makefile's
// check before the e2e tests).
const Install = "pip install 'moto[server]'"

// Options configure a server.
type Options struct {
	// Dir gets the server's log, moto.log. Required.
	Dir string
	// Python is the interpreter with moto installed: $PYTHON, else python3.
	Python string
	// Region is the region of Call's requests; default us-west-2.
	Region string
}

// Server is a running moto server.
type Server struct {
	URL     string // http://127.0.0.1:PORT
	Version string // moto's version, as the launcher reported it
	Region  string

	cmd     *exec.Cmd
	done    chan struct{}
	logPath string
	client  *http.Client
	stop    sync.Once
}

// Launcher is the path of the launcher in the repository at root.
func Launcher(root string) string {
	return filepath.Join(root, "e2e", "moto", "server.py")
}

// Start starts moto's server through the launcher of the repository at
// root and returns once it listens, its patches proven. Without moto the
// error says how to install it.
func Start(ctx context.Context, root string, opt Options) (*Server, error) {
	if opt.Dir == "" {
		return nil, errors.New("moto: Options.Dir is required")
	}
	python := opt.Python
	if python == "" {
		python = os.Getenv("PYTHON")
	}
	if python == "" {
		python = "python3"
	}
	if opt.Region == "" {
		opt.Region = "us-west-2"
	}
	if _, err := exec.LookPath(python); err != nil {
		return nil, fmt.Errorf("moto: %s not found (moto's server runs on Python: %s): %w", python, Install, err)
	}
	s := &Server{Region: opt.Region, done: make(chan struct{}), logPath: filepath.Join(opt.Dir, "moto.log"),
		// Never through a proxy: the server is on loopback.
		client: &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 2 * time.Minute}}
	log, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(python, Launcher(root), "--region", opt.Region)
	cmd.Stderr = log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		log.Close()
		return nil, err
	}
	// Its own process group with a parent-death signal, as the control
	// plane's programs (spawn).
	if err := spawn.Start(cmd); err != nil {
		log.Close()
		return nil, fmt.Errorf("moto: starting %s: %w", python, err)
	}
	s.cmd = cmd
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(log, line)
			if strings.Contains(line, " listening on ") {
				select {
				case ready <- line:
				default:
				}
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(s.done)
	}()
	timeout := time.NewTimer(3 * time.Minute)
	defer timeout.Stop()
	select {
	case line := <-ready:
		// "moto VERSION listening on URL"
		f := strings.Fields(line)
		s.Version, s.URL = f[1], f[len(f)-1]
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("moto: the launcher exited: %s", s.tail(2000))
	case <-ctx.Done():
		s.Stop()
		return nil, ctx.Err()
	case <-timeout.C:
		s.Stop()
		return nil, fmt.Errorf("moto: not listening after 3m: %s", s.tail(2000))
	}
}

// Stop stops the server. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.stop.Do(func() { spawn.Stop(s.cmd.Process.Pid, s.done, 10*time.Second) })
}

// Log returns the server's log.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

func (s *Server) tail(n int) string {
	l := s.Log()
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.TrimSpace(l)
}

// CallError is an AWS error a call got.
type CallError struct {
	Service, Action string
	Code, Message   string
}

func (e *CallError) Error() string {
	return fmt.Sprintf("moto: %s %s: %s: %s", e.Service, e.Action, e.Code, e.Message)
}

// Call runs an AWS action (its API name: "DescribeInstances") of a service
// (boto3's name: ec2, elb, elbv2, iam) as an administrator, whether IAM is
// enforced or not, with params as the API names them, and decodes the
// result into out (nil: ignore it). Times are strings in the result.
func (s *Server) Call(ctx context.Context, service, action string, params, out any) error {
	body, err := json.Marshal(map[string]any{"service": service, "action": action, "params": params})
	if err != nil {
		return err
	}
	data, status, err := s.do(ctx, http.MethodPost, "/e2e/call", "application/json", body)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		var e struct{ Error, Code string }
		_ = json.Unmarshal(data, &e)
		return &CallError{Service: service, Action: action, Code: e.Code, Message: e.Error}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

func (s *Server) do(ctx context.Context, method, path, contentType string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("moto: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return data, resp.StatusCode, err
}

// Enforce makes the server enforce IAM from now on (moto's reset-auth):
// every request must be signed with the key of an IAM user whose policies
// allow it; Call goes on working as the administrator.
func (s *Server) Enforce(ctx context.Context) error {
	return s.resetAuth(ctx, "0")
}

// Unenforce stops enforcing IAM: any key may do anything.
func (s *Server) Unenforce(ctx context.Context) error {
	return s.resetAuth(ctx, "inf")
}

func (s *Server) resetAuth(ctx context.Context, count string) error {
	data, status, err := s.do(ctx, http.MethodPost, "/moto-api/reset-auth", "text/plain", []byte(count))
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("moto: reset-auth %s: %d %s", count, status, data)
	}
	return nil
}

// Credentials are an IAM user's access key.
type Credentials struct {
	User, AccessKeyID, SecretAccessKey string
}

// Env is the credentials as the AWS SDKs read them from the environment.
func (c Credentials) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + c.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + c.SecretAccessKey}
}

// CreateUser creates an IAM user with the policy document (JSON) as its
// inline policy, and an access key of its own.
func (s *Server) CreateUser(ctx context.Context, name string, policy []byte) (Credentials, error) {
	if err := s.Call(ctx, "iam", "CreateUser", map[string]any{"UserName": name}, nil); err != nil {
		return Credentials{}, err
	}
	if err := s.Call(ctx, "iam", "PutUserPolicy", map[string]any{
		"UserName": name, "PolicyName": name, "PolicyDocument": string(policy),
	}, nil); err != nil {
		return Credentials{}, err
	}
	var out struct {
		AccessKey struct{ AccessKeyId, SecretAccessKey string }
	}
	if err := s.Call(ctx, "iam", "CreateAccessKey", map[string]any{"UserName": name}, &out); err != nil {
		return Credentials{}, err
	}
	return Credentials{User: name, AccessKeyID: out.AccessKey.AccessKeyId, SecretAccessKey: out.AccessKey.SecretAccessKey}, nil
}

// Request is one AWS request the server answered.
type Request struct {
	Seq       int
	Time      float64 // Unix seconds
	AccessKey string  // of the signature: who sent it
	Service   string  // of the signature's scope: ec2, elasticloadbalancing
	Region    string
	Action    string // DescribeInstances
	UserAgent string
	Status    int
	Error     string // the AWS error code, when Status is 400 or more
	Admin     bool   // sent by Call
}

// Requests returns every AWS request the server answered, oldest first.
func (s *Server) Requests(ctx context.Context) ([]Request, error) {
	data, status, err := s.do(ctx, http.MethodGet, "/e2e/requests", "", nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("moto: requests: %d %s", status, data)
	}
	var out []Request
	return out, json.Unmarshal(data, &out)
}

// By returns the requests signed with an access key.
func By(reqs []Request, accessKeyID string) []Request {
	var out []Request
	for _, r := range reqs {
		if r.AccessKey == accessKeyID {
			out = append(out, r)
		}
	}
	return out
}

// Denied returns the distinct "service:Action" names of the requests IAM
// refused, in the order first refused.
func Denied(reqs []Request) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range reqs {
		switch r.Error {
		case "UnauthorizedOperation", "AccessDenied":
			if a := r.Service + ":" + r.Action; !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// IsRead says whether an action (its API name: DescribeInstances) only
// reads: it starts with Describe, Get or List, or it is
// SimulatePrincipalPolicy, which evaluates policies and changes nothing.
func IsRead(action string) bool {
	if action == "SimulatePrincipalPolicy" {
		return true
	}
	for _, p := range []string{"Describe", "Get", "List"} {
		if strings.HasPrefix(action, p) {
			return true
		}
	}
	return false
}

// Writes returns the requests whose action is not a read (IsRead), in
// order: none when a client only read. A request whose action the server
// could not tell is among them.
func Writes(reqs []Request) []Request {
	var out []Request
	for _, r := range reqs {
		if !IsRead(r.Action) {
			out = append(out, r)
		}
	}
	return out
}
