package servicediscoveryapi

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/cloudmapstore"
)

// The JSON shapes of the requests and answers, member names as the service model spells
// them. Request members are pointers where the model tells a missing member from an empty
// one.

type wireTag struct {
	Key   *string `json:"Key"`
	Value *string `json:"Value"`
}

type outTag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

type wireFilter struct {
	Name      string   `json:"Name"`
	Values    []string `json:"Values"`
	Condition string   `json:"Condition"`
}

type soa struct {
	TTL *int64 `json:"TTL"`
}

type dnsNamespaceProperties struct {
	DNSProperties *struct {
		SOA *soa `json:"SOA"`
	} `json:"DnsProperties"`
}

type createNamespaceIn struct {
	Name             string                  `json:"Name"`
	CreatorRequestID string                  `json:"CreatorRequestId"`
	Description      string                  `json:"Description"`
	Vpc              *string                 `json:"Vpc"`
	Tags             []wireTag               `json:"Tags"`
	Properties       *dnsNamespaceProperties `json:"Properties"`
}

type idIn struct {
	ID string `json:"Id"`
}

type listIn struct {
	NextToken  string       `json:"NextToken"`
	MaxResults *int32       `json:"MaxResults"`
	Filters    []wireFilter `json:"Filters"`
}

type dnsRecordIn struct {
	Type string `json:"Type"`
	TTL  *int64 `json:"TTL"`
}

type dnsConfigIn struct {
	NamespaceID   string        `json:"NamespaceId"`
	RoutingPolicy string        `json:"RoutingPolicy"`
	DNSRecords    []dnsRecordIn `json:"DnsRecords"`
}

type createServiceIn struct {
	Name                    string          `json:"Name"`
	NamespaceID             string          `json:"NamespaceId"`
	CreatorRequestID        string          `json:"CreatorRequestId"`
	Description             string          `json:"Description"`
	DNSConfig               *dnsConfigIn    `json:"DnsConfig"`
	HealthCheckConfig       json.RawMessage `json:"HealthCheckConfig"`
	HealthCheckCustomConfig *struct {
		FailureThreshold *int32 `json:"FailureThreshold"`
	} `json:"HealthCheckCustomConfig"`
	Tags []wireTag `json:"Tags"`
	Type string    `json:"Type"`
}

type registerInstanceIn struct {
	ServiceID        string            `json:"ServiceId"`
	InstanceID       string            `json:"InstanceId"`
	CreatorRequestID string            `json:"CreatorRequestId"`
	Attributes       map[string]string `json:"Attributes"`
}

type instanceRefIn struct {
	ServiceID  string `json:"ServiceId"`
	InstanceID string `json:"InstanceId"`
}

type listInstancesIn struct {
	ServiceID  string `json:"ServiceId"`
	NextToken  string `json:"NextToken"`
	MaxResults *int32 `json:"MaxResults"`
}

type healthStatusIn struct {
	ServiceID  string   `json:"ServiceId"`
	Instances  []string `json:"Instances"`
	NextToken  string   `json:"NextToken"`
	MaxResults *int32   `json:"MaxResults"`
}

type updateHealthIn struct {
	ServiceID  string `json:"ServiceId"`
	InstanceID string `json:"InstanceId"`
	Status     string `json:"Status"`
}

type discoverIn struct {
	NamespaceName      string            `json:"NamespaceName"`
	ServiceName        string            `json:"ServiceName"`
	MaxResults         *int32            `json:"MaxResults"`
	QueryParameters    map[string]string `json:"QueryParameters"`
	OptionalParameters map[string]string `json:"OptionalParameters"`
	HealthStatus       string            `json:"HealthStatus"`
	OwnerAccount       string            `json:"OwnerAccount"`
}

type operationIn struct {
	OperationID string `json:"OperationId"`
}

type tagsIn struct {
	ResourceARN string    `json:"ResourceARN"`
	Tags        []wireTag `json:"Tags"`
	TagKeys     []string  `json:"TagKeys"`
}

// epoch is a timestamp as the JSON protocols write one: seconds since the epoch, with
// milliseconds ("1516925490.087", as the model's documentation of CreateDate shows).
type epoch time.Time

// MarshalJSON writes the timestamp as a number.
func (e epoch) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(time.Time(e).UnixMilli())/1000, 'f', -1, 64)), nil
}

type operationIDOut struct {
	OperationID string `json:"OperationId"`
}

type empty struct{}

type dnsPropertiesOut struct {
	HostedZoneID string `json:"HostedZoneId,omitempty"`
	SOA          *struct {
		TTL int64 `json:"TTL"`
	} `json:"SOA,omitempty"`
}

type namespacePropertiesOut struct {
	DNSProperties  *dnsPropertiesOut `json:"DnsProperties,omitempty"`
	HTTPProperties struct {
		HTTPName string `json:"HttpName"`
	} `json:"HttpProperties"`
}

type namespaceOut struct {
	ID               string                 `json:"Id"`
	Arn              string                 `json:"Arn"`
	Name             string                 `json:"Name"`
	Type             string                 `json:"Type"`
	Description      string                 `json:"Description,omitempty"`
	ServiceCount     int                    `json:"ServiceCount"`
	Properties       namespacePropertiesOut `json:"Properties"`
	CreateDate       epoch                  `json:"CreateDate"`
	CreatorRequestID string                 `json:"CreatorRequestId,omitempty"`
	ResourceOwner    string                 `json:"ResourceOwner"`
}

func toNamespace(n cloudmapstore.Namespace, owner string, summary bool) namespaceOut {
	out := namespaceOut{ID: n.ID, Arn: n.ARN, Name: n.Name, Type: n.Type, Description: n.Description,
		ServiceCount: n.ServiceCount, CreateDate: epoch(n.Created), ResourceOwner: owner}
	if !summary {
		out.CreatorRequestID = n.CreatorRequestID
	}
	out.Properties.HTTPProperties.HTTPName = n.HTTPName
	if n.IsDNS() {
		p := &dnsPropertiesOut{HostedZoneID: n.HostedZoneID}
		if n.SOATTL != nil {
			p.SOA = &struct {
				TTL int64 `json:"TTL"`
			}{*n.SOATTL}
		}
		out.Properties.DNSProperties = p
	}
	return out
}

type dnsRecordOut struct {
	Type string `json:"Type"`
	TTL  int64  `json:"TTL"`
}

type dnsConfigOut struct {
	NamespaceID   string         `json:"NamespaceId,omitempty"`
	RoutingPolicy string         `json:"RoutingPolicy"`
	DNSRecords    []dnsRecordOut `json:"DnsRecords"`
}

type customHealthOut struct {
	FailureThreshold int `json:"FailureThreshold"`
}

type serviceOut struct {
	ID                      string           `json:"Id"`
	Arn                     string           `json:"Arn"`
	Name                    string           `json:"Name"`
	NamespaceID             string           `json:"NamespaceId,omitempty"`
	Description             string           `json:"Description,omitempty"`
	InstanceCount           int              `json:"InstanceCount"`
	DNSConfig               *dnsConfigOut    `json:"DnsConfig,omitempty"`
	Type                    string           `json:"Type"`
	HealthCheckCustomConfig *customHealthOut `json:"HealthCheckCustomConfig,omitempty"`
	CreateDate              epoch            `json:"CreateDate"`
	CreatorRequestID        string           `json:"CreatorRequestId,omitempty"`
	CreatedByAccount        string           `json:"CreatedByAccount"`
	ResourceOwner           string           `json:"ResourceOwner"`
}

func toService(v cloudmapstore.Service, owner string, summary bool) serviceOut {
	out := serviceOut{ID: v.ID, Arn: v.ARN, Name: v.Name, Description: v.Description, InstanceCount: v.InstanceCount,
		Type: v.Type, CreateDate: epoch(v.Created), CreatedByAccount: owner, ResourceOwner: owner}
	if !summary {
		out.NamespaceID, out.CreatorRequestID = v.NamespaceID, v.CreatorRequestID
	}
	if v.DNS != nil {
		d := &dnsConfigOut{RoutingPolicy: v.DNS.RoutingPolicy, DNSRecords: []dnsRecordOut{}}
		if !summary {
			d.NamespaceID = v.NamespaceID
		}
		for _, r := range v.DNS.Records {
			d.DNSRecords = append(d.DNSRecords, dnsRecordOut(r))
		}
		out.DNSConfig = d
	}
	if v.CustomHealth {
		// FailureThreshold is deprecated: "always set to 1".
		out.HealthCheckCustomConfig = &customHealthOut{FailureThreshold: 1}
	}
	return out
}

type instanceOut struct {
	ID               string            `json:"Id"`
	CreatorRequestID string            `json:"CreatorRequestId,omitempty"`
	Attributes       map[string]string `json:"Attributes"`
	CreatedByAccount string            `json:"CreatedByAccount"`
}

type discoveredOut struct {
	InstanceID    string            `json:"InstanceId"`
	NamespaceName string            `json:"NamespaceName"`
	ServiceName   string            `json:"ServiceName"`
	HealthStatus  string            `json:"HealthStatus"`
	Attributes    map[string]string `json:"Attributes"`
}

type operationOut struct {
	ID           string            `json:"Id"`
	Type         string            `json:"Type"`
	Status       string            `json:"Status"`
	ErrorMessage string            `json:"ErrorMessage,omitempty"`
	ErrorCode    string            `json:"ErrorCode,omitempty"`
	CreateDate   epoch             `json:"CreateDate"`
	UpdateDate   epoch             `json:"UpdateDate"`
	Targets      map[string]string `json:"Targets"`
	OwnerAccount string            `json:"OwnerAccount"`
}

type operationSummaryOut struct {
	ID     string `json:"Id"`
	Status string `json:"Status"`
}

func tagsOf(in []wireTag) []cloudmapstore.Tag {
	if in == nil {
		return nil
	}
	out := make([]cloudmapstore.Tag, 0, len(in))
	for _, t := range in {
		var tag cloudmapstore.Tag
		if t.Key != nil {
			tag.Key = *t.Key
		}
		if t.Value != nil {
			tag.Value = *t.Value
		}
		out = append(out, tag)
	}
	return out
}

func filtersOf(in []wireFilter) []cloudmapstore.Filter {
	out := make([]cloudmapstore.Filter, len(in))
	for i, f := range in {
		out[i] = cloudmapstore.Filter(f)
	}
	return out
}
