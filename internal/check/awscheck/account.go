package awscheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
)

// callerIdentity asks who check reads as (sts:GetCallerIdentity: needs no
// permission); it fails only on credentials AWS does not take.
func (r *awsReader) callerIdentity(ctx context.Context) {
	out, err := r.sts.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if r.done(check.AreaAWS, "sts:GetCallerIdentity", err) {
		r.acct.Caller = aws.ToString(out.Arn)
	}
}

func profileHint(profile string) string {
	if profile == "" {
		return ""
	}
	return " (profile " + profile + ")"
}

// sharedFiles are the files of the environment the SDK reads when it loads
// its configuration: the shared config and credentials files, the CA
// bundle and the web identity token.
func sharedFiles() []string {
	cfg, creds := os.Getenv("AWS_CONFIG_FILE"), os.Getenv("AWS_SHARED_CREDENTIALS_FILE")
	if cfg == "" {
		cfg = config.DefaultSharedConfigFilename()
	}
	if creds == "" {
		creds = config.DefaultSharedCredentialsFilename()
	}
	return []string{cfg, creds, os.Getenv("AWS_CA_BUNDLE"), os.Getenv("AWS_WEB_IDENTITY_TOKEN_FILE")}
}

// checkSharedFiles refuses, before the SDK reads them without bound, the
// files of sharedFiles that are not regular files of at most
// safefile.MaxRead bytes; those that do not exist are the SDK's to judge,
// and /dev/null (AWS_CONFIG_FILE=/dev/null: no shared config) reads empty.
func checkSharedFiles() error {
	for _, p := range sharedFiles() {
		if p == "" || p == os.DevNull {
			continue
		}
		if err := safefile.CheckFile(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Profiles lists the profiles of the shared config and credentials
// files the SDK reads ($AWS_CONFIG_FILE, $AWS_SHARED_CREDENTIALS_FILE, else
// ~/.aws/config and ~/.aws/credentials), for --aws-profile's completion.
func Profiles() []string {
	var names []string
	read := func(path string, prefixed bool) {
		data, err := safefile.ReadFile(path)
		if err != nil {
			return
		}
		for _, s := range check.IniSections(string(data)) {
			name := strings.Join(strings.Fields(s.Head()), " ")
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
	files := sharedFiles()
	read(files[0], true)
	read(files[1], false)
	sort.Strings(names)
	return names
}

// unreadFindings say what an area could not read, and what check needs.
func unreadFindings(v *check.View, area string) []check.Finding {
	var out []check.Finding
	for _, u := range unread(v.AWS, area) {
		f := check.Finding{Area: area, Severity: check.Info, Subject: u.Action, Message: "could not read: " + strings.TrimPrefix(u.Code+": ", ": ") + u.Message}
		if u.Denied {
			f.Message = "could not read: AWS refused check " + u.Action + " (" + u.Code + ")"
			f.Fix = "grant " + u.Action + " to the identity check runs as (" + orUnknown(v.AWS.Caller) + "); docs/check.md has the read-only policy check --aws needs"
		}
		out = append(out, f)
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// awsAccountRule says which account and region check read, where from.
func awsAccountRule(v *check.View) []check.Finding {
	a := v.AWS
	if a == nil {
		return nil
	}
	msg := "region " + a.Region + " (from " + map[string]string{"flag": "--aws-region", "nodes": "the nodes", "sdk": "the AWS configuration"}[a.RegionFrom] + ")"
	if a.Caller != "" {
		msg += ", read as " + a.Caller
	}
	if len(a.Endpoints) > 0 {
		var eps []string
		for _, s := range slices.Sorted(maps.Keys(a.Endpoints)) {
			eps = append(eps, s+" at "+a.Endpoints[s])
		}
		msg += "; endpoints: " + strings.Join(eps, ", ")
	}
	n := 0
	for _, c := range a.Calls {
		n += c
	}
	msg += fmt.Sprintf("; %d read-only calls", n)
	return append([]check.Finding{{Area: check.AreaAWS, Severity: check.Info, Message: msg}}, unreadFindings(v, check.AreaAWS)...)
}
