package check

import (
	"net/url"
	"regexp"
	"strings"
)

// instanceIDForm is an EC2 instance ID as the CCM accepts it.
var instanceIDForm = regexp.MustCompile(`^i-[^/]*$`)

// InstanceIDOf reads the instance ID out of a providerID as the CCM does
// (MapToAWSInstanceID, the same at v1.26.0 and v1.35.3): a value without
// the aws:// scheme is read as aws:///VALUE, and the last path segment is
// the ID, which must start with i- (or fargate- for Fargate nodes, which
// have no instance). ok is false when the CCM refuses it ("Invalid format
// for AWS instance").
func InstanceIDOf(providerID string) (id string, fargate, ok bool) {
	s := providerID
	if !strings.HasPrefix(s, "aws://") {
		s = "aws:///" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", false, false
	}
	tokens := strings.Split(strings.Trim(u.Path, "/"), "/")
	last := tokens[len(tokens)-1]
	switch {
	case strings.HasPrefix(last, "fargate-"):
		return last, true, true
	case instanceIDForm.MatchString(last):
		return last, false, true
	}
	return "", false, false
}

// NameAsInstanceID is the instance ID a node name that is one stands for
// (resource-based hostnames: i-0abc, or i-0abc.us-west-2.compute.internal
// where the CCM cuts the name at the first dot, from v1.26.11, v1.27.2 and
// v1.28.0; v1.26.0 sends the whole name). ok is false for other names.
func NameAsInstanceID(name string, cuts bool) (string, bool) {
	if !strings.HasPrefix(name, "i-") {
		return "", false
	}
	if cuts {
		name, _, _ = strings.Cut(name, ".")
	}
	return name, true
}
