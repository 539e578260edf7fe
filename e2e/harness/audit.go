package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// auditPolicy records the TokenRequests the API server answers (create on
// serviceaccounts/token, who asked for which account, and the answer) and
// nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create]
  resources:
  - group: ""
    resources: [serviceaccounts/token]
- level: None
`

// auditArgs writes the audit policy and returns the API server's flags
// that log by it to the control plane's directory.
func (cp *ControlPlane) auditArgs() ([]string, error) {
	policy := filepath.Join(cp.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + cp.auditLog(), "--audit-log-mode=blocking"}, nil
}

func (cp *ControlPlane) auditLog() string { return filepath.Join(cp.Dir, "audit.log") }

// TokenRequest is one TokenRequest the API server answered: who asked, for
// which service account, and the answer's HTTP status.
type TokenRequest struct {
	User      string // the requester's user name
	Namespace string // of the service account
	Name      string // of the service account
	Code      int
}

// TokenRequests returns every TokenRequest the API server has answered so
// far, in order, from its audit log.
func (cp *ControlPlane) TokenRequests() ([]TokenRequest, error) {
	f, err := os.Open(cp.auditLog())
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []TokenRequest
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var e struct {
			Stage string `json:"stage"`
			User  struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef struct {
				Namespace   string `json:"namespace"`
				Name        string `json:"name"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("audit log %s: %w", cp.auditLog(), err)
		}
		if e.Stage != "ResponseComplete" || e.ObjectRef.Subresource != "token" {
			continue
		}
		out = append(out, TokenRequest{User: e.User.Username, Namespace: e.ObjectRef.Namespace, Name: e.ObjectRef.Name, Code: e.ResponseStatus.Code})
	}
	return out, sc.Err()
}
