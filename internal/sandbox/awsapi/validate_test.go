package awsapi

import "testing"

func TestSchema(t *testing.T) {
	s := Schema{Code: "ValidationError"}
	for _, tc := range []struct {
		name string
		err  *Error
		want string // "" for no error
	}{
		{"constraint", s.Constraint(0, "priority", "Member must be positive"),
			"1 validation error detected: Value '0' at 'priority' failed to satisfy constraint: Member must be positive"},
		{"not null", s.NotNull("listenerArn"),
			"1 validation error detected: Value null at 'listenerArn' failed to satisfy constraint: Member must not be null"},
		{"range below", s.Range(0, "port", 1, 65535),
			"1 validation error detected: Value '0' at 'port' failed to satisfy constraint: Member must have value greater than or equal to 1"},
		{"range above", s.Range(65536, "port", 1, 65535),
			"1 validation error detected: Value '65536' at 'port' failed to satisfy constraint: Member must have value less than or equal to 65535"},
		{"range at the low end", s.Range(1, "port", 1, 65535), ""},
		{"range at the high end", s.Range(65535, "port", 1, 65535), ""},
		{"enum member", s.Enum("HTTP", "protocol", "HTTP", "HTTPS"), ""},
		{"enum outside", s.Enum("TCP", "protocol", "HTTP", "HTTPS"),
			"1 validation error detected: Value 'TCP' at 'protocol' failed to satisfy constraint: Member must satisfy enum value set: [HTTP, HTTPS]"},
		{"enum is case sensitive", s.Enum("http", "protocol", "HTTP"),
			"1 validation error detected: Value 'http' at 'protocol' failed to satisfy constraint: Member must satisfy enum value set: [HTTP]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == "" {
				if tc.err != nil {
					t.Fatalf("got error %v, want none", tc.err)
				}
				return
			}
			if tc.err == nil {
				t.Fatalf("got no error, want %q", tc.want)
			}
			if tc.err.Code != s.Code || tc.err.Message != tc.want {
				t.Fatalf("got %s: %q, want %s: %q", tc.err.Code, tc.err.Message, s.Code, tc.want)
			}
		})
	}
}

func TestPartition(t *testing.T) {
	for _, tc := range []struct{ region, want string }{
		{"us-east-1", "aws"},
		{"eu-west-1", "aws"},
		{"", "aws"},
		{"cn-north-1", "aws-cn"},
		{"cn-northwest-1", "aws-cn"},
		{"us-gov-west-1", "aws-us-gov"},
		{"us-gov-east-1", "aws-us-gov"},
		{"us-govcloud-1", "aws"}, // only the us-gov- prefix is GovCloud
	} {
		if got := Partition(tc.region); got != tc.want {
			t.Errorf("Partition(%q) = %q, want %q", tc.region, got, tc.want)
		}
	}
}
