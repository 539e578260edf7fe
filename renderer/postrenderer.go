package renderer

import (
	"bytes"
)

// PostRenderer runs the renderer inside a Go program. Its Run method has the
// signature of Helm's post-renderer interface (helm.sh/helm/v3/pkg/postrender
// and helm.sh/helm/v4/pkg/postrenderer), so it plugs into an action.Install
// or action.Upgrade without a subprocess.
type PostRenderer struct {
	r *Renderer
	// Warn, when set, receives the renderer's warnings.
	Warn func(string)
}

// NewPostRenderer validates the options and returns a PostRenderer.
func NewPostRenderer(o Options) (*PostRenderer, error) {
	r, err := New(o)
	if err != nil {
		return nil, err
	}
	return &PostRenderer{r: r}, nil
}

// Run patches Helm's rendered manifests.
func (p *PostRenderer) Run(renderedManifests *bytes.Buffer) (*bytes.Buffer, error) {
	out, err := p.r.Render(renderedManifests.Bytes())
	if err != nil {
		return nil, err
	}
	if p.Warn != nil {
		for _, w := range out.Warnings {
			p.Warn(w)
		}
	}
	return bytes.NewBuffer(out.Bytes()), nil
}
