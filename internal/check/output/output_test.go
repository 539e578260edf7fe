package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
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

// hostile is a name as a kubeconfig or a cluster may hold it: an escape
// sequence that colours the terminal, a line feed, a tab, a C1 control,
// DEL and a bidirectional override.
const hostile = "a\x1b[31mred\nnext\tcol\u009b2J\x7f\u202eevil"

// TestControlCharactersEscaped: every text from a kubeconfig or the
// cluster is printed escaped, on its line, in the table and the summary;
// the JSON document holds it escaped and reads back the same.
func TestControlCharactersEscaped(t *testing.T) {
	const want = `a\x1b[31mred\nnext\tcol\u009b2J\x7f\u202eevil`
	r := &check.Report{Context: hostile, Server: "https://" + hostile, KubernetesVersion: hostile,
		Distribution: check.Distribution{Detected: hostile}, Summary: check.Summary{Errors: 1},
		AWS:      &check.AWSSummary{Region: hostile},
		Findings: []check.Finding{{Area: check.AreaNode, Severity: check.Error, Subject: hostile, Message: hostile, Fix: hostile}}}
	failed := check.Failed(hostile, "", errors.New(hostile))
	var b strings.Builder
	for _, rep := range []*check.Report{r, failed} {
		if err := WriteTable(&b, rep, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteSummary(&b, []*check.Report{r, failed}, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// Table: heading, finding, fix, counts; failed: heading, error;
	// summary: heading and two rows.
	if len(lines) != 4+2+3 {
		t.Errorf("%d lines, want 9:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if safetext.HasControl(l) {
			t.Errorf("a control character printed: %q", l)
		}
	}
	// The table: heading 3, finding 2, fix 1; failed 2; summary 4 and 2.
	if n := strings.Count(out, want); n != 6+2+4+2 {
		t.Errorf("want 14 escaped names, got %d:\n%s", n, out)
	}
	for _, row := range lines[len(lines)-2:] {
		if !strings.Contains(row, want) {
			t.Errorf("summary row without the escaped context: %q", row)
		}
	}

	var j bytes.Buffer
	if err := WriteJSON(&j, []*check.Report{r}); err != nil {
		t.Fatal(err)
	}
	if safetext.HasControl(strings.ReplaceAll(j.String(), "\n", "")) {
		t.Errorf("JSON holds a control character: %q", j.String())
	}
	var back Result
	if err := json.Unmarshal(j.Bytes(), &back); err != nil || back.Clusters[0].Context != hostile || back.Clusters[0].Findings[0].Fix != hostile {
		t.Errorf("JSON does not read back: %v", err)
	}
}
