package plan

import (
	"embed"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/releases"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer"
	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// The plans' prose lives in texts/*.tmpl, one file per Go file whose steps
// it describes: each text a template ({{define "name"}}) of textData. A
// text is a paragraph: the files break its lines anywhere, and a run of
// white space in a file reads as one space (a text holds no line breaks;
// commands and configuration, which do, are built in Go).
//
//go:embed texts/*.tmpl
var textFiles embed.FS

// texts parses the files the first time a plan is built, not when the
// program starts: the post-renderer links this package for its plan
// command and pays nothing for it otherwise.
var texts = sync.OnceValue(parseTexts)

func parseTexts() *template.Template {
	t := template.New("plan").Option("missingkey=error")
	names, err := textFiles.ReadDir("texts")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		b, err := textFiles.ReadFile("texts/" + n.Name())
		if err != nil {
			panic(err)
		}
		template.Must(t.New(n.Name()).Parse(strings.Join(strings.Fields(string(b)), " ")))
	}
	return t
}

// textData is what the texts read: the plan's options, what follows from
// them, and the names and facts they cite.
type textData struct {
	Options
	Minor          int
	Tag, TagSource string
	// Name is the distribution's display name.
	Name string

	RancherPlanner, HoldServices, CCMLease, KCMConfigPath, LeaseNS string
	CloudConfigFile, CloudConfigValues                             string
	DefaultLeaderName, DefaultKCMUser                              string
	ActionDescribeAZs, ActionInstanceTopology, APIServerCPSource   string
	RKELastMinor, APIServerNoCloudProvider                         int
	// Args are what a text reads beyond these: the step's parts passed
	// in, facts computed for it.
	Args map[string]any
}

// data is the plan's textData.
func (b *builder) data() textData {
	r := b.r
	return textData{
		Options: r.Options, Minor: r.minor, Tag: r.tag, TagSource: r.tagSource, Name: distros.DisplayName(r.Distro),
		RancherPlanner: rancherPlanner, HoldServices: k3sHoldServices, CCMLease: ccmLease, KCMConfigPath: kcmConfigPath,
		LeaseNS: leaseNS, CloudConfigFile: cloudConfigFile, CloudConfigValues: cloudConfigValues,
		DefaultLeaderName: renderer.DefaultLeaderName, DefaultKCMUser: DefaultKCMUser,
		ActionDescribeAZs: releases.ActionDescribeAZs, ActionInstanceTopology: releases.ActionInstanceTopology,
		APIServerCPSource: apiServerCP.Source, RKELastMinor: rkeLastMinor, APIServerNoCloudProvider: apiServerNoCloudProvider,
	}
}

// text is the plan's text of a name.
func (b *builder) text(name string) string { return prose(name, b.data()) }

// texts are the plan's texts name, name.2, name.3, ...: as many as
// texts/ defines, the notes of a step one a paragraph.
func (b *builder) texts(name string) []string {
	l := []string{b.text(name)}
	for i := 2; texts().Lookup(name+"."+strconv.Itoa(i)) != nil; i++ {
		l = append(l, b.text(name+"."+strconv.Itoa(i)))
	}
	return l
}

// textWith is the plan's text of a name, with more to read in .Args.
func (b *builder) textWith(name string, args map[string]any) string {
	d := b.data()
	d.Args = args
	return prose(name, d)
}

// prose is the text of a name, written from data.
func prose(name string, data any) string {
	var s strings.Builder
	if err := texts().ExecuteTemplate(&s, name, data); err != nil {
		panic("internal/plan/texts: " + err.Error())
	}
	return s.String()
}
