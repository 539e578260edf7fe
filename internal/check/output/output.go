// Package output writes check's reports: the table a person reads, the
// fleet summary and the JSON document (docs/check.schema.json).
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/check"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safetext"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/terminal"
)

// ResultAPIVersion and ResultKind identify check's JSON output.
const (
	ResultAPIVersion = "aws-ccm-renderer.io/v1alpha1"
	ResultKind       = "CheckResult"
)

// Result is check's JSON output: one report per cluster, in the order the
// contexts were given.
type Result struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Clusters   []*check.Report `json:"clusters"`
}

// WriteJSON writes the reports as one indented JSON document. Its strings
// hold no control character as safetext reads them: encoding/json escapes
// C0 and U+2028/U+2029 itself, and the rest (DEL, C1, the bidirectional
// controls) are escaped here, as \u escapes the document means the same
// by.
func WriteJSON(w io.Writer, reports []*check.Report) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Result{APIVersion: ResultAPIVersion, Kind: ResultKind, Clusters: reports}); err != nil {
		return err
	}
	_, err := w.Write(escapeJSON(b.Bytes()))
	return err
}

// escapeJSON writes as \u escapes the control characters encoding/json
// leaves as they are. Outside its strings a JSON document holds only
// ASCII, so each is in a string, where the escape means the same.
func escapeJSON(doc []byte) []byte {
	left := func(r rune) bool { return r >= 0x7f && safetext.IsControl(r) }
	if !bytes.ContainsFunc(doc, left) {
		return doc
	}
	var b bytes.Buffer
	for _, r := range string(doc) {
		if left(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.Bytes()
}

// Symbol is the mark a person reads at a glance.
func Symbol(s check.Severity) string {
	switch s {
	case check.OK:
		return "✓"
	case check.Warning:
		return "!"
	case check.Error:
		return "✗"
	}
	return "·"
}

// mark is a severity's symbol, in its colour when colour is set.
func mark(colour bool, s check.Severity) string {
	return terminal.Paint(colour, colourOf(s), Symbol(s))
}

func colourOf(s check.Severity) string {
	switch s {
	case check.OK:
		return terminal.Green
	case check.Warning:
		return terminal.Yellow
	case check.Error:
		return terminal.Red
	}
	return terminal.Dim
}

// WriteTable writes one cluster's report for a person: a heading, one
// line per finding with its mark, and the fix on the line below. What the
// report holds came from a kubeconfig (context, server) or the cluster
// (names, versions, messages that quote them), and a control character in
// it would drive the terminal or break the line: each text is written
// through safetext.Escape, as a Go escape. (JSON needs none:
// encoding/json escapes every control character.)
func WriteTable(w io.Writer, r *check.Report, colour bool) error {
	var b strings.Builder
	head := "Cluster " + safetext.Escape(r.Context)
	if r.Server != "" {
		head += " (" + safetext.Escape(r.Server) + ")"
	}
	if r.KubernetesVersion != "" {
		head += ", Kubernetes " + safetext.Escape(r.KubernetesVersion)
	}
	b.WriteString(terminal.Paint(colour, terminal.Bold, head) + "\n")
	if r.Error != "" {
		fmt.Fprintf(&b, "  %s %s\n", mark(colour, check.Error), safetext.Escape(r.Error))
		_, err := io.WriteString(w, b.String())
		return err
	}
	width := 0 // the longest area name without --aws, or longer
	for _, a := range check.Areas() {
		if !check.AWSArea(a) {
			width = max(width, len(a))
		}
	}
	for _, f := range r.Findings {
		width = max(width, len(f.Area))
	}
	indent := strings.Repeat(" ", 2+2+width+2)
	for _, f := range r.Findings {
		line := safetext.Escape(f.Message)
		if f.Subject != "" {
			line = safetext.Escape(f.Subject) + ": " + line
		}
		fmt.Fprintf(&b, "  %s %-*s  %s\n", mark(colour, f.Severity), width, safetext.Escape(f.Area), line)
		if f.Fix != "" {
			fmt.Fprintf(&b, "%s→ %s\n", indent, safetext.Escape(f.Fix))
		}
	}
	fmt.Fprintf(&b, "  %s (checked in %dms)\n", counts(r), r.DurationMS)
	_, err := io.WriteString(w, b.String())
	return err
}

func counts(r *check.Report) string {
	if r.Summary.Errors == 0 && r.Summary.Warnings == 0 {
		return "no problems"
	}
	var parts []string
	if n := r.Summary.Errors; n > 0 {
		parts = append(parts, count(n, "error"))
	}
	if n := r.Summary.Warnings; n > 0 {
		parts = append(parts, count(n, "warning"))
	}
	return strings.Join(parts, ", ")
}

// WriteSummary writes one row per cluster: what a fleet's readiness looks
// like at a glance.
func WriteSummary(w io.Writer, reports []*check.Report, colour bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	withAWS := slices.ContainsFunc(reports, func(r *check.Report) bool { return r.AWS != nil })
	head := "\tCONTEXT\tDISTRIBUTION\tKUBERNETES\tCCM ON CONTROL PLANE\tUNINITIALISED\tPROBLEMS"
	if withAWS {
		head += "\tAWS"
	}
	fmt.Fprintln(tw, head)
	for _, r := range reports {
		sev := check.OK
		switch {
		case r.Error != "":
			sev = check.Error
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t%s%s\n", mark(colour, sev), safetext.Escape(r.Context), safetext.Escape(firstClause(r.Error)), map[bool]string{true: "\t-"}[withAWS])
			continue
		case r.Summary.Errors > 0:
			sev = check.Error
		case r.Summary.Warnings > 0:
			sev = check.Warning
		}
		placed := fmt.Sprintf("%d/%d", r.Summary.CCMOnControlPlane, r.Summary.ControlPlaneNodes)
		if r.Workload == nil {
			placed = "no CCM"
		}
		awsCol := ""
		if withAWS {
			awsCol = "\t" + awsCounts(r.AWS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d\t%s%s\n", mark(colour, sev), safetext.Escape(r.Context), safetext.Escape(r.Distribution.Detected),
			safetext.Escape(r.KubernetesVersion), placed, r.Summary.Uninitialized, r.Summary.Nodes, counts(r), awsCol)
	}
	return tw.Flush()
}

// awsCounts is the summary's AWS column: the region and the AWS areas'
// problems, and how many reads failed.
func awsCounts(a *check.AWSSummary) string {
	if a == nil {
		return "-"
	}
	var parts []string
	if a.Errors > 0 {
		parts = append(parts, count(a.Errors, "error"))
	}
	if a.Warnings > 0 {
		parts = append(parts, count(a.Warnings, "warning"))
	}
	if len(a.Unread) > 0 {
		parts = append(parts, fmt.Sprintf("%d unread", len(a.Unread)))
	}
	if len(parts) == 0 {
		parts = append(parts, "ok")
	}
	return safetext.Escape(a.Region) + ": " + strings.Join(parts, ", ")
}

// firstClause shortens an error for the summary table.
func firstClause(s string) string {
	if i := strings.Index(s, " (kubectl"); i > 0 {
		return s[:i]
	}
	if len(s) > 100 {
		return s[:97] + "..."
	}
	return s
}

// count writes n of a noun whose plural takes an s: "1 error", "2 errors".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
