package output

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
)

// TestWriteTableLiteral: a report written as a literal: the area column as
// wide as the longest cluster area, a fix below its finding, the counts.
func TestWriteTableLiteral(t *testing.T) {
	r := &check.Report{Context: "c", Findings: []check.Finding{
		{Area: check.AreaNode, Severity: check.Error, Subject: "n-1", Message: "uninitialised", Fix: "start the CCM"},
		{Area: check.AreaPlan, Severity: check.OK, Message: "fine"},
	}, Summary: check.Summary{Errors: 1}}
	var b strings.Builder
	if err := WriteTable(&b, r, false); err != nil {
		t.Fatal(err)
	}
	want := "Cluster c\n  ✗ node          n-1: uninitialised\n                  → start the CCM\n  ✓ plan          fine\n  1 error (checked in 0ms)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestCounts: singular and plural, and a failed cluster's first clause.
func TestCounts(t *testing.T) {
	if got := counts(&check.Report{Summary: check.Summary{Errors: 2, Warnings: 1}}); got != "2 errors, 1 warning" {
		t.Errorf("counts: %q", got)
	}
	if got := awsCounts(&check.AWSSummary{Region: "eu-west-1", Errors: 1, Unread: []check.AWSUnread{{}}}); got != "eu-west-1: 1 error, 1 unread" {
		t.Errorf("awsCounts: %q", got)
	}
	if got := firstClause(check.Failed("x", "", errors.New("refused (kubectl get nodes)")).Error); got != "refused" {
		t.Errorf("firstClause: %q", got)
	}
	if Symbol(check.Info) != "·" || Symbol(check.Warning) != "!" {
		t.Error("symbols")
	}
}
