package renderer

import "testing"

func TestHostNetwork(t *testing.T) {
	runFilterCases(t, []filterCase{
		{name: "on", filter: HostNetwork{Enabled: true}, input: ds("      dnsPolicy: Default\n"),
			want: ds("      dnsPolicy: Default\n      hostNetwork: true\n")},
		{name: "off removes it", filter: HostNetwork{}, input: ds("      hostNetwork: true\n      dnsPolicy: Default\n"),
			want: ds("      dnsPolicy: Default\n")},
		{name: "not a workload", filter: HostNetwork{Enabled: true}, input: "kind: Service\nmetadata:\n  name: s\n",
			wantErr: "Service s: no pod template"},
	})
}
