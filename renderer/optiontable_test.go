package renderer

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws-ccm-renderer/aws-ccm-renderer/renderer/distros"
)

// TestOptionTable: every field of Options has one entry in OptionTable,
// keyed as its yaml and json tags say, with a flag of its own; an entry
// reads and writes its own field.
func TestOptionTable(t *testing.T) {
	typ := reflect.TypeOf(Options{})
	if len(OptionTable) != typ.NumField() {
		t.Errorf("%d entries for %d fields of Options", len(OptionTable), typ.NumField())
	}
	flags := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if j, _, _ := strings.Cut(f.Tag.Get("json"), ","); j != key {
			t.Errorf("%s: yaml key %q, json key %q", f.Name, key, j)
		}
		op, ok := OptionOf(Opt(key))
		if !ok {
			t.Errorf("%s (%s) has no entry in OptionTable", f.Name, key)
			continue
		}
		if flags[op.Flag] || op.Flag == "" || op.Usage == "" {
			t.Errorf("%s: flag %q (given twice, or empty) or no usage", key, op.Flag)
		}
		flags[op.Flag] = true
		if FlagSpelling(op.Opt) != "--"+op.Flag || KeySpelling(op.Opt) != key {
			t.Errorf("%s: spelled %s and %s", key, FlagSpelling(op.Opt), KeySpelling(op.Opt))
		}
		// The entry's field is this one: setting it through the entry
		// changes this field and no other.
		var o Options
		text := "x"
		if op.IsBool() {
			text = "true"
		}
		if err := op.Set(&o, text); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		for k := range typ.NumField() {
			set := !reflect.ValueOf(o).Field(k).IsZero()
			if set != (k == i) {
				t.Errorf("%s: setting it sets %s: %v", key, typ.Field(k).Name, set)
			}
		}
		if got := op.Text(o); !slices.Equal(got, []string{text}) {
			t.Errorf("%s: Text %q after Set %q", key, got, text)
		}
		var dst Options
		op.Take(&dst, o)
		if !reflect.DeepEqual(dst, o) {
			t.Errorf("%s: Take copied %+v, want %+v", key, dst, o)
		}
		if op.IsList() != (f.Type.Kind() == reflect.Slice) {
			t.Errorf("%s: IsList %v", key, op.IsList())
		}
	}
	if got := FlagSpelling("nothing"); got != "nothing" {
		t.Errorf("an unknown option is spelled %q", got)
	}
}

func TestOptionSet(t *testing.T) {
	o := DefaultOptions()
	hn, _ := OptionOf(OptHostNetwork)
	if err := hn.Set(&o, "maybe"); err == nil || err.Error() != "want true or false" {
		t.Errorf("a bool that is none: %v", err)
	}
	if err := hn.Set(&o, "false"); err != nil || *o.HostNetwork || !hn.Given(o) || *DefaultOptions().HostNetwork != true {
		t.Errorf("host-network=false: %v %v", err, *o.HostNetwork)
	}
	sa, _ := OptionOf(OptSetArgs)
	for _, v := range []string{"v=4", "x=1"} {
		if err := sa.Set(&o, v); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(o.SetArgs, []string{"v=4", "x=1"}) {
		t.Errorf("a list gets an item each: %q", o.SetArgs)
	}
	o.Distro, o.Mode, o.KCMUser = distros.RKE, ModeMigrate, "me"
	want := []string{"--distro=rke", "--mode=migrate", "--host-network=false", "--set-arg=v=4", "--set-arg=x=1", "--kcm-user=me"}
	if got := FlagArgs(o, OptDistro, OptMode, OptHostNetwork, OptSetArgs, OptRemoveArgs, OptLeaderName, OptKCMUser); !slices.Equal(got, want) {
		t.Errorf("FlagArgs %q, want %q", got, want)
	}
	if got := FlagArgs(DefaultOptions(), OptDistro, OptMode, OptHostNetwork, OptLeaderName); !slices.Equal(got, []string{"--distro=auto", "--mode=install"}) {
		t.Errorf("FlagArgs of the defaults %q: only what is always said", got)
	}
}

// TestRecordedKeys: OptionsAnnotation holds the options OptionTable marks
// recorded, under their keys, and reads back what it holds.
func TestRecordedKeys(t *testing.T) {
	o := DefaultOptions()
	for _, op := range OptionTable {
		text := "other"
		if op.IsBool() {
			text = "false"
		}
		if err := op.Set(&o, text); err != nil {
			t.Fatal(err)
		}
	}
	o.Mode = ModeMigrate
	b, err := json.Marshal(recordOf(o))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, op := range OptionTable {
		if op.Recorded {
			want = append(want, string(op.Opt))
		}
	}
	if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("recorded keys %q, want %q", got, want)
	}
	back, err := ParseRecordedOptions(string(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range OptionTable {
		if op.Recorded && !slices.Equal(op.Text(back), op.Text(o)) {
			t.Errorf("%s: read back %q, recorded %q", op.Opt, op.Text(back), op.Text(o))
		}
	}
	if _, err := ParseRecordedOptions("{"); err == nil {
		t.Error("a broken annotation is read")
	}
}
