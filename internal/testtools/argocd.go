package testtools

// ArgoCDAnnouncement is a parameter announcement of an Argo CD config
// management plugin: an item of plugin.yaml's spec.parameters.static, and
// what Argo CD's repo server returns for the UI's Parameters tab (Argo CD's
// ParameterAnnouncement), read with either YAML library of the tests.
type ArgoCDAnnouncement struct {
	Name           string   `json:"name" yaml:"name"`
	Title          string   `json:"title" yaml:"title"`
	Tooltip        string   `json:"tooltip" yaml:"tooltip"`
	Required       bool     `json:"required" yaml:"required"`
	ItemType       string   `json:"itemType" yaml:"itemType"`
	CollectionType string   `json:"collectionType" yaml:"collectionType"`
	String         *string  `json:"string" yaml:"string"`
	Array          []string `json:"array" yaml:"array"`
}
