package chartops

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/strvals"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/internal/safefile"
)

// mergeValues is Helm's values.Options.MergeValues with every local read
// bounded. Helm reads a values file, a --set-file file and "-" (stdin)
// whole and without a limit (-f /dev/zero ran out of memory, -f on a named
// pipe waited for a writer), so before it reads anything each local file
// is checked (safefile.CheckFile: a regular file of at most
// safefile.MaxRead bytes), and a values file "-" is read here, bounded,
// into a file of the call's own that Helm reads in its place. A URL is
// left to Helm's getters. --set-file KEY=- is refused: stdin goes to one
// values file at most.
func mergeValues(opts values.Options, p getter.Providers, stdin io.Reader) (map[string]any, error) {
	opts.ValueFiles = append([]string(nil), opts.ValueFiles...)
	var tmp string
	defer func() {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}()
	for i, f := range opts.ValueFiles {
		if strings.TrimSpace(f) != "-" {
			if err := checkLocal(f, p); err != nil {
				return nil, err
			}
			continue
		}
		if tmp != "" {
			return nil, errors.New(`values file "-" given twice: stdin is read once`)
		}
		b, err := safefile.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading stdin (-f -): %w", err)
		}
		if tmp, err = os.MkdirTemp("", "aws-ccm-renderer-values-"); err != nil {
			return nil, err
		}
		opts.ValueFiles[i] = filepath.Join(tmp, "stdin.yaml")
		if err := os.WriteFile(opts.ValueFiles[i], b, 0o600); err != nil {
			return nil, err
		}
	}
	for _, v := range opts.FileValues {
		// Helm's own parser finds the paths; the reader only checks them.
		check := func(rs []rune) (any, error) {
			path := string(rs)
			if strings.TrimSpace(path) == "-" {
				return nil, fmt.Errorf("--set-file %s: stdin (-) is not read for --set-file; give a file", v)
			}
			return "", checkLocal(path, p)
		}
		if err := strvals.ParseIntoFile(v, map[string]any{}, check); err != nil {
			return nil, fmt.Errorf("failed parsing --set-file data: %w", err)
		}
	}
	return opts.MergeValues(p)
}

// checkLocal checks a file Helm would read from disk: not a URL of a
// scheme a getter serves.
func checkLocal(path string, p getter.Providers) error {
	if u, err := url.Parse(path); err == nil && u.Scheme != "" {
		if _, err := p.ByScheme(u.Scheme); err == nil {
			return nil
		}
	}
	return safefile.CheckFile(path)
}

// stdinOr is r, else the process's stdin, which Helm's values read.
func stdinOr(r io.Reader) io.Reader {
	if r == nil {
		return os.Stdin
	}
	return r
}
