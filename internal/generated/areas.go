package generated

import "regexp"

// CheckSchema is check's JSON schema, whose findings' area enum is the
// areas of check's rules (check.Areas).
const CheckSchema = "docs/check.schema.json"

// checkAreaLine is the schema's area enum: group 1 what comes before it,
// group 2 the list.
var checkAreaLine = regexp.MustCompile(`("area": \{"enum": )(\[[^\]\n]*\])`)

// AreaPins checks the area enum of check's JSON schema against areas
// (check.Areas), or with write rewrites it; it returns the problems.
func AreaPins(root string, areas []string, write bool) ([]string, error) {
	return rewriteFile(root, CheckSchema, []generatedLine{
		{"the area enum", checkAreaLine, jsonList(areas), "no area enum (\"area\": {\"enum\": [...]})"},
	}, "the check rules' areas'", write)
}
