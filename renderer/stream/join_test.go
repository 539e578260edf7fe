package stream

import (
	"strings"
	"testing"
)

// TestBuilder: whatever is kept, replaced, added or left out, the output
// splits into exactly the documents written, whatever the input's first
// line, line endings or last byte.
func TestBuilder(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		build func(b *Builder, docs []*Doc)
		want  string
	}{
		{
			name: "a document added before a first document without a separator",
			in:   "kind: DaemonSet\nmetadata: {name: a}\n",
			build: func(b *Builder, docs []*Doc) {
				b.Add([]byte("kind: ConfigMap\n"))
				b.Keep(docs[0])
			},
			want: "kind: ConfigMap\n---\nkind: DaemonSet\nmetadata: {name: a}\n",
		},
		{
			name: "a first document with leading comments, replaced after an added one",
			in:   "# comment\n\nkind: DaemonSet\n---\nkind: Service\n",
			build: func(b *Builder, docs []*Doc) {
				b.Add([]byte("kind: ConfigMap\n"))
				b.Replace(docs[0], []byte("kind: DaemonSet\nspec: {}\n"))
				b.Keep(docs[1])
			},
			want: "kind: ConfigMap\n---\n# comment\n\nkind: DaemonSet\nspec: {}\n---\nkind: Service\n",
		},
		{
			name: "the first document removed",
			in:   "kind: ConfigMap\n---\nkind: Service\n",
			build: func(b *Builder, docs []*Doc) {
				b.Keep(docs[1])
			},
			want: "---\nkind: Service\n",
		},
		{
			name: "a separator-less first document kept after the first one was removed",
			in:   "kind: A\n---\nkind: B\n",
			build: func(b *Builder, docs []*Doc) {
				b.Keep(docs[1])
				b.Keep(docs[0])
			},
			want: "---\nkind: B\n---\nkind: A\n",
		},
		{
			name: "no line break at the end of the input",
			in:   "kind: A\n---\nkind: B",
			build: func(b *Builder, docs []*Doc) {
				b.Keep(docs[1])
				b.Add([]byte("kind: C\n"))
			},
			want: "---\nkind: B\n---\nkind: C\n",
		},
		{
			name: "CRLF: a replaced document keeps its line endings, added separators follow the stream",
			in:   "kind: A\r\n---\r\nkind: B\r\n",
			build: func(b *Builder, docs []*Doc) {
				b.Keep(docs[0])
				b.Add([]byte("kind: C\n"))
				b.Replace(docs[1], []byte("kind: B\nx: 1\n"))
			},
			want: "kind: A\r\n---\r\nkind: C\n---\r\nkind: B\r\nx: 1\r\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			docs := Split([][]byte{[]byte(c.in)})
			var b Builder
			c.build(&b, docs)
			if got := string(b.Bytes()); got != c.want {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
			if b.Len() != len(b.Bytes()) {
				t.Errorf("Len %d, %d bytes", b.Len(), len(b.Bytes()))
			}
			// What was written splits into as many documents as were written.
			written := Split([][]byte{b.Bytes()})
			if n := strings.Count(c.want, "kind:"); len(written) != n {
				t.Errorf("the output splits into %d documents, %d were written", len(written), n)
			}
		})
	}
}

// TestSplitKeepsEveryByte: joining the documents gives back the input.
func TestSplitKeepsEveryByte(t *testing.T) {
	for _, in := range []string{"", "a: 1", "---", "---\n", "a\n---\nb\n---", "# c\n---\r\nk: v\r\n--- # x\n...\n", "----\n---x\n--- \n"} {
		var joined string
		for _, d := range Split([][]byte{[]byte(in)}) {
			joined += string(d.Raw)
		}
		if joined != in {
			t.Errorf("%q split and joined is %q", in, joined)
		}
	}
}
