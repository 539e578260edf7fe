package terminal

import (
	"io"
	"regexp"
	"strings"
)

// userinfo finds the user information of URLs in text: a scheme, "://",
// and what stands before the last "@" of the authority (the URL parser
// takes the last one, so a password with an "@" in it is hidden whole).
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)([^/?#\s]*)@`)

// RedactURLs hides the credentials of every URL in s, as url.URL's
// Redacted does for one: https://user:xxxxx@host/. A user without a
// password is hidden too (xxxxx@host): it is often a token. Helm's errors
// repeat a repository's URL as it was given, so what the chart commands
// print goes through this (Redacting) rather than each message being
// written with care.
func RedactURLs(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userinfo.ReplaceAllStringFunc(s, func(m string) string {
		sub := userinfo.FindStringSubmatch(m)
		user, _, hasPassword := strings.Cut(sub[2], ":")
		if !hasPassword {
			return sub[1] + "xxxxx@"
		}
		return sub[1] + user + ":xxxxx@"
	})
}

// redacting is a writer whose writes have URL credentials hidden.
type redacting struct{ w io.Writer }

// Redacting returns a writer that writes to w what it is given with the
// credentials of URLs hidden (RedactURLs), each write on its own: what is
// written in one piece (a line, a message) is redacted whole. IsTerminal
// and Colour see w through it.
func Redacting(w io.Writer) io.Writer {
	if _, ok := w.(*redacting); ok || w == nil {
		return w
	}
	return &redacting{w: w}
}

func (r *redacting) Write(b []byte) (int, error) {
	if _, err := io.WriteString(r.w, RedactURLs(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
