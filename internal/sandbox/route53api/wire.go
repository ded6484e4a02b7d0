package route53api

import "encoding/xml"

// Requests. Numbers arrive as strings so that a bad one gets an error naming its field
// instead of the XML decoder's generic complaint.

type createHostedZoneRequest struct {
	XMLName          xml.Name `xml:"CreateHostedZoneRequest"`
	Name             string   `xml:"Name"`
	CallerReference  string   `xml:"CallerReference"`
	HostedZoneConfig *struct {
		Comment     string `xml:"Comment"`
		PrivateZone bool   `xml:"PrivateZone"`
	} `xml:"HostedZoneConfig"`
	VPC *struct {
		VPCRegion string `xml:"VPCRegion"`
		VPCId     string `xml:"VPCId"`
	} `xml:"VPC"`
	// DelegationSetID asks for a reusable delegation set, which the sandbox does not have.
	DelegationSetID string `xml:"DelegationSetId"`
}

type changeBatchRequest struct {
	XMLName     xml.Name `xml:"ChangeResourceRecordSetsRequest"`
	ChangeBatch struct {
		Comment string       `xml:"Comment"`
		Changes []wireChange `xml:"Changes>Change"`
	} `xml:"ChangeBatch"`
}

type wireChange struct {
	Action string      `xml:"Action"`
	Set    wireRRSetIn `xml:"ResourceRecordSet"`
}

type wireRRSetIn struct {
	Name            string        `xml:"Name"`
	Type            string        `xml:"Type"`
	SetIdentifier   string        `xml:"SetIdentifier"`
	Weight          *string       `xml:"Weight"`
	Failover        string        `xml:"Failover"`
	TTL             *string       `xml:"TTL"`
	ResourceRecords *[]wireRecord `xml:"ResourceRecords>ResourceRecord"`
	AliasTarget     *wireAlias    `xml:"AliasTarget"`
	HealthCheckID   string        `xml:"HealthCheckId"`

	// What the sandbox does not serve: decoded only to be refused by name, so that a change
	// using them is never silently taken for a simple set.
	Region                  *string   `xml:"Region"`
	MultiValueAnswer        *string   `xml:"MultiValueAnswer"`
	GeoLocation             *struct{} `xml:"GeoLocation"`
	GeoProximityLocation    *struct{} `xml:"GeoProximityLocation"`
	CidrRoutingConfig       *struct{} `xml:"CidrRoutingConfig"`
	TrafficPolicyInstanceID *string   `xml:"TrafficPolicyInstanceId"`
}

type wireRecord struct {
	Value string `xml:"Value"`
}

type wireAlias struct {
	HostedZoneID         string `xml:"HostedZoneId"`
	DNSName              string `xml:"DNSName"`
	EvaluateTargetHealth string `xml:"EvaluateTargetHealth"`
}

type changeTagsRequest struct {
	XMLName       xml.Name  `xml:"ChangeTagsForResourceRequest"`
	AddTags       []wireTag `xml:"AddTags>Tag"`
	RemoveTagKeys []string  `xml:"RemoveTagKeys>Key"`
}

type listTagsRequest struct {
	XMLName     xml.Name `xml:"ListTagsForResourcesRequest"`
	ResourceIDs []string `xml:"ResourceIds>ResourceId"`
}

// Responses.

type wireTag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type wireZoneConfig struct {
	Comment     string `xml:"Comment,omitempty"`
	PrivateZone bool   `xml:"PrivateZone"`
}

type wireZone struct {
	ID                     string         `xml:"Id"`
	Name                   string         `xml:"Name"`
	CallerReference        string         `xml:"CallerReference"`
	Config                 wireZoneConfig `xml:"Config"`
	ResourceRecordSetCount int            `xml:"ResourceRecordSetCount"`
}

type wireChangeInfo struct {
	ID          string `xml:"Id"`
	Status      string `xml:"Status"`
	SubmittedAt string `xml:"SubmittedAt"`
	Comment     string `xml:"Comment,omitempty"`
}

type wireDelegationSet struct {
	NameServers []string `xml:"NameServers>NameServer"`
}

type createHostedZoneResponse struct {
	XMLName       xml.Name          `xml:"https://route53.amazonaws.com/doc/2013-04-01/ CreateHostedZoneResponse"`
	HostedZone    wireZone          `xml:"HostedZone"`
	ChangeInfo    wireChangeInfo    `xml:"ChangeInfo"`
	DelegationSet wireDelegationSet `xml:"DelegationSet"`
}

type getHostedZoneResponse struct {
	XMLName       xml.Name           `xml:"https://route53.amazonaws.com/doc/2013-04-01/ GetHostedZoneResponse"`
	HostedZone    wireZone           `xml:"HostedZone"`
	DelegationSet *wireDelegationSet `xml:"DelegationSet,omitempty"`
}

type listHostedZonesResponse struct {
	XMLName     xml.Name   `xml:"https://route53.amazonaws.com/doc/2013-04-01/ ListHostedZonesResponse"`
	HostedZones []wireZone `xml:"HostedZones>HostedZone"`
	Marker      string     `xml:"Marker"`
	IsTruncated bool       `xml:"IsTruncated"`
	NextMarker  string     `xml:"NextMarker,omitempty"`
	MaxItems    int        `xml:"MaxItems"`
}

type listHostedZonesByNameResponse struct {
	XMLName          xml.Name   `xml:"https://route53.amazonaws.com/doc/2013-04-01/ ListHostedZonesByNameResponse"`
	HostedZones      []wireZone `xml:"HostedZones>HostedZone"`
	DNSName          string     `xml:"DNSName,omitempty"`
	HostedZoneID     string     `xml:"HostedZoneId,omitempty"`
	IsTruncated      bool       `xml:"IsTruncated"`
	NextDNSName      string     `xml:"NextDNSName,omitempty"`
	NextHostedZoneID string     `xml:"NextHostedZoneId,omitempty"`
	MaxItems         int        `xml:"MaxItems"`
}

type hostedZoneCountResponse struct {
	XMLName         xml.Name `xml:"https://route53.amazonaws.com/doc/2013-04-01/ GetHostedZoneCountResponse"`
	HostedZoneCount int      `xml:"HostedZoneCount"`
}

type deleteHostedZoneResponse struct {
	XMLName    xml.Name       `xml:"https://route53.amazonaws.com/doc/2013-04-01/ DeleteHostedZoneResponse"`
	ChangeInfo wireChangeInfo `xml:"ChangeInfo"`
}

type changeResponse struct {
	XMLName    xml.Name       `xml:"https://route53.amazonaws.com/doc/2013-04-01/ ChangeResourceRecordSetsResponse"`
	ChangeInfo wireChangeInfo `xml:"ChangeInfo"`
}

type getChangeResponse struct {
	XMLName    xml.Name       `xml:"https://route53.amazonaws.com/doc/2013-04-01/ GetChangeResponse"`
	ChangeInfo wireChangeInfo `xml:"ChangeInfo"`
}

type wireRRSetOut struct {
	Name            string        `xml:"Name"`
	Type            string        `xml:"Type"`
	SetIdentifier   string        `xml:"SetIdentifier,omitempty"`
	Weight          *int64        `xml:"Weight,omitempty"`
	Failover        string        `xml:"Failover,omitempty"`
	TTL             *int64        `xml:"TTL,omitempty"`
	ResourceRecords []wireRecord  `xml:"ResourceRecords>ResourceRecord,omitempty"`
	AliasTarget     *wireAliasOut `xml:"AliasTarget,omitempty"`
	HealthCheckID   string        `xml:"HealthCheckId,omitempty"`
}

type wireAliasOut struct {
	HostedZoneID         string `xml:"HostedZoneId"`
	DNSName              string `xml:"DNSName"`
	EvaluateTargetHealth bool   `xml:"EvaluateTargetHealth"`
}

type listRRSetsResponse struct {
	XMLName              xml.Name       `xml:"https://route53.amazonaws.com/doc/2013-04-01/ ListResourceRecordSetsResponse"`
	ResourceRecordSets   []wireRRSetOut `xml:"ResourceRecordSets>ResourceRecordSet"`
	IsTruncated          bool           `xml:"IsTruncated"`
	NextRecordName       string         `xml:"NextRecordName,omitempty"`
	NextRecordType       string         `xml:"NextRecordType,omitempty"`
	NextRecordIdentifier string         `xml:"NextRecordIdentifier,omitempty"`
	MaxItems             int            `xml:"MaxItems"`
}

type wireTagSet struct {
	ResourceType string    `xml:"ResourceType"`
	ResourceID   string    `xml:"ResourceId"`
	Tags         []wireTag `xml:"Tags>Tag"`
}

type listTagsForResourceResponse struct {
	XMLName        xml.Name   `xml:"https://route53.amazonaws.com/doc/2013-04-01/ ListTagsForResourceResponse"`
	ResourceTagSet wireTagSet `xml:"ResourceTagSet"`
}

type listTagsForResourcesResponse struct {
	XMLName         xml.Name     `xml:"https://route53.amazonaws.com/doc/2013-04-01/ ListTagsForResourcesResponse"`
	ResourceTagSets []wireTagSet `xml:"ResourceTagSets>ResourceTagSet"`
}

type changeTagsResponse struct {
	XMLName xml.Name `xml:"https://route53.amazonaws.com/doc/2013-04-01/ ChangeTagsForResourceResponse"`
}

type errorResponse struct {
	XMLName xml.Name `xml:"https://route53.amazonaws.com/doc/2013-04-01/ ErrorResponse"`
	Error   struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
	RequestID string `xml:"RequestId"`
}
