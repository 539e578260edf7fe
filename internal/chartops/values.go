package chartops

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
)

// mergeValues is Helm's values.Options.MergeValues (helm.sh/helm/v3
// pkg/cli/values, v3.22), the same order, the same parsers and the same
// words, with every read bounded: a values file or a --set-file file is a
// regular file of at most safefile.MaxRead bytes, and "-" reads at most
// that much of stdin. Helm's reads os.ReadFile and io.ReadAll(os.Stdin)
// without bound, so -f /dev/zero ran out of memory and -f on a named pipe
// waited for a writer.
func mergeValues(opts values.Options, p getter.Providers, stdin io.Reader) (map[string]any, error) {
	base := map[string]any{}
	for _, filePath := range opts.ValueFiles {
		currentMap := map[string]any{}
		bytes, err := readValuesFile(filePath, p, stdin)
		if err != nil {
			return nil, err
		}
		if err := yaml.Unmarshal(bytes, &currentMap); err != nil {
			return nil, fmt.Errorf("failed to parse %s: %w", filePath, err)
		}
		base = mergeMaps(base, currentMap)
	}
	for _, value := range opts.JSONValues {
		if err := strvals.ParseJSON(value, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set-json data %s", value)
		}
	}
	for _, value := range opts.Values {
		if err := strvals.ParseInto(value, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set data: %w", err)
		}
	}
	for _, value := range opts.StringValues {
		if err := strvals.ParseIntoString(value, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set-string data: %w", err)
		}
	}
	for _, value := range opts.FileValues {
		reader := func(rs []rune) (any, error) {
			bytes, err := readValuesFile(string(rs), p, stdin)
			if err != nil {
				return nil, err
			}
			return string(bytes), err
		}
		if err := strvals.ParseIntoFile(value, base, reader); err != nil {
			return nil, fmt.Errorf("failed parsing --set-file data: %w", err)
		}
	}
	for _, value := range opts.LiteralValues {
		if err := strvals.ParseLiteralInto(value, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set-literal data: %w", err)
		}
	}
	return base, nil
}

// mergeMaps is Helm's: b's keys over a's, maps merged key by key.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]any); ok {
			if bv, ok := out[k]; ok {
				if bv, ok := bv.(map[string]any); ok {
					out[k] = mergeMaps(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

// readValuesFile reads a values file as Helm's readFile does: "-" is
// stdin, a URL of a scheme a getter provides is downloaded, anything else
// is a local file; stdin and the file bounded.
func readValuesFile(filePath string, p getter.Providers, stdin io.Reader) ([]byte, error) {
	if strings.TrimSpace(filePath) == "-" {
		b, err := safefile.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading stdin (-): %w", err)
		}
		return b, nil
	}
	u, err := url.Parse(filePath)
	if err != nil {
		return nil, err
	}
	g, err := p.ByScheme(u.Scheme)
	if err != nil {
		return safefile.ReadFile(filePath)
	}
	data, err := g.Get(filePath, getter.WithURL(filePath))
	if err != nil {
		return nil, err
	}
	return data.Bytes(), nil
}

// stdinOr is r, else the process's stdin, which Helm's values read.
func stdinOr(r io.Reader) io.Reader {
	if r == nil {
		return os.Stdin
	}
	return r
}
