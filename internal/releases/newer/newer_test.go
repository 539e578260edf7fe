package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
)

const (
	digest4 = "sha256:4444444444444444444444444444444444444444444444444444444444444444"
	digest5 = "sha256:5555555555555555555555555555555555555555555555555555555555555555"
)

// TestReportPromoted: a list in the promotion list's format with two
// releases the data does not record reports them with their digests, in
// version order, and exits 3; recorded tags, pre-releases, releases older
// than the data and other images' tags are not reported.
func TestReportPromoted(t *testing.T) {
	list, err := os.ReadFile("testdata/images.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code, err := report(&out, nil, list)
	if err != nil || code != 3 {
		t.Fatalf("code %d, %v", code, err)
	}
	want := "does not record (add each to releases.Promoted, with the list's commit in PromotedSource): v1.36.2@" + digest5 + ", v1.37.1@" + digest4 + "\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("got\n%s\nwant a line ending\n%s", out.String(), want)
	}
	for _, not := range []string{"v1.20.1", "rc.0", "v1.35.2", "v1.34.3", "sha256:1111", "module proxy serves"} {
		if strings.Contains(out.String(), not) {
			t.Errorf("%q reported:\n%s", not, out.String())
		}
	}
}

// TestReportCurrent: the release data's own digests make a current report
// (exit 0); a served release past the data is still reported.
func TestReportCurrent(t *testing.T) {
	var b strings.Builder
	b.WriteString("- name: cloud-controller-manager\n  dmap:\n")
	for tag, d := range releases.Promoted {
		b.WriteString("    \"" + d + "\": [\"" + tag + "\"]\n")
	}
	var out bytes.Buffer
	code, err := report(&out, nil, []byte(b.String()))
	if err != nil || code != 0 || !strings.HasPrefix(out.String(), "internal/releases is current") {
		t.Fatalf("code %d, %v:\n%s", code, err, out.String())
	}
	out.Reset()
	next := releases.Candidates()[len(releases.Candidates())-1]
	code, err = report(&out, []string{next}, []byte(b.String()))
	if err != nil || code != 3 || !strings.Contains(out.String(), "does not pin: "+next+"\n") || strings.Contains(out.String(), "promoted cloud-controller-manager images") {
		t.Fatalf("code %d, %v:\n%s", code, err, out.String())
	}
}

// TestReportChanged: a recorded tag the list gives another digest is
// reported as changed, never as new.
func TestReportChanged(t *testing.T) {
	list := "- name: cloud-controller-manager\n  dmap:\n    \"" + digest4 + "\": [\"v1.35.2\"]\n"
	var out bytes.Buffer
	code, err := report(&out, nil, []byte(list))
	want := "v1.35.2: " + releases.Promoted["v1.35.2"] + ", listed " + digest4
	if err != nil || code != 3 || !strings.Contains(out.String(), want) || strings.Contains(out.String(), "does not record") {
		t.Fatalf("code %d, %v:\n%s", code, err, out.String())
	}
}

// TestReportBadList: what is not a promotion list with the CCM's image,
// well formed, is an error and writes nothing.
func TestReportBadList(t *testing.T) {
	for name, list := range map[string]string{
		"not YAML":       "- name: [",
		"not a list":     "name: cloud-controller-manager\n",
		"unknown field":  "- name: cloud-controller-manager\n  dmap: {}\n  other: 1\n",
		"no CCM":         "- name: aws-ebs-csi-driver\n  dmap: {}\n",
		"bad digest":     "- name: cloud-controller-manager\n  dmap:\n    \"sha256:abc\": [\"v1.35.2\"]\n",
		"two digests":    "- name: cloud-controller-manager\n  dmap:\n    \"" + digest4 + "\": [\"v1.36.2\"]\n    \"" + digest5 + "\": [\"v1.36.2\"]\n",
		"digest as tags": "- name: cloud-controller-manager\n  dmap:\n    \"" + digest4 + "\": \"v1.36.2\"\n",
	} {
		var out bytes.Buffer
		if code, err := report(&out, nil, []byte(list)); err == nil || code != 1 || out.Len() > 0 {
			t.Errorf("%s: code %d, %v, wrote %q", name, code, err, out.String())
		}
	}
}
