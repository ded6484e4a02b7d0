package zones

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/miekg/dns"
)

// Route 53's per-request limits.
const (
	MaxRecordsPerBatch    = 1000
	MaxValueCharsPerBatch = 32000
	MaxValueLength        = 4000
	MaxWeightedSets       = 100
	MaxWeight             = 255
	MaxSetIdentifierLen   = 128
	MaxTTL                = 2147483647
)

// supportedTypes are the record types the sandbox serves: every type Route 53 accepts.
var supportedTypes = map[string]uint16{
	"A": dns.TypeA, "AAAA": dns.TypeAAAA, "CNAME": dns.TypeCNAME, "TXT": dns.TypeTXT,
	"MX": dns.TypeMX, "SRV": dns.TypeSRV, "NS": dns.TypeNS, "SOA": dns.TypeSOA,
	"CAA": dns.TypeCAA, "PTR": dns.TypePTR, "DS": dns.TypeDS, "NAPTR": dns.TypeNAPTR,
	"SPF": dns.TypeSPF, "SSHFP": dns.TypeSSHFP, "TLSA": dns.TypeTLSA, "SVCB": dns.TypeSVCB,
	"HTTPS": dns.TypeHTTPS,
}

// typeEnum is the RRType enum as Route 53's validation messages list it: in the order of
// the service model (botocore's route53 service-2.json, aws-sdk-go-v2's types.RRType).
const typeEnum = "[SOA, A, TXT, NS, CNAME, MX, NAPTR, PTR, SRV, SPF, AAAA, CAA, DS, TLSA, SSHFP, SVCB, HTTPS]"

// checkInput applies the request-shape rules that Route 53 reports as InvalidInput, before
// any rule that depends on the zone's contents. i is the 1-based position in the batch.
func checkInput(i int, c Change) *Error {
	at := func(field string) string {
		return fmt.Sprintf("changeBatch.changes.%d.member.%s", i, field)
	}
	s := c.Set
	switch c.Action {
	case Create, Delete, Upsert:
	default:
		return schema.Constraint(c.Action, at("action"), "Member must satisfy enum value set: [DELETE, CREATE, UPSERT]")
	}
	if s.Name == "" || s.Name == "." {
		return schema.NotNull(at("resourceRecordSet.name"))
	}
	if len(s.Name) > 1024 {
		return errorf(CodeInvalidInput, "1 validation error detected: Value at '%s' failed to satisfy constraint: Member must have length less than or equal to 1024", at("resourceRecordSet.name"))
	}
	if _, ok := supportedTypes[s.Type]; !ok {
		return schema.Constraint(s.Type, at("resourceRecordSet.type"), "Member must satisfy enum value set: "+typeEnum)
	}
	if s.Weight != nil {
		if err := schema.Range(*s.Weight, at("resourceRecordSet.weight"), 0, MaxWeight); err != nil {
			return err
		}
	}
	if s.TTL != nil && (*s.TTL < 0 || *s.TTL > MaxTTL) {
		return schema.Constraint(*s.TTL, at("resourceRecordSet.TTL"), "Member must have value between 0 and 2147483647")
	}
	if len(s.SetIdentifier) > MaxSetIdentifierLen {
		return schema.Constraint(s.SetIdentifier, at("resourceRecordSet.setIdentifier"), "Member must have length less than or equal to 128")
	}
	if s.Failover != "" {
		if err := schema.Enum(s.Failover, at("resourceRecordSet.failover"), Primary, Secondary); err != nil {
			return err
		}
	}
	policies := 0
	if s.Weight != nil {
		policies++
	}
	if s.Failover != "" {
		policies++
	}
	const policyFields = "[Weight, Region, Failover, GeoLocation, MultiValueAnswer, GeoProximityLocation, or CidrRoutingConfig]"
	switch {
	case policies > 1:
		return errorf(CodeInvalidInput, "Invalid request: Expected exactly one of %s, but found more than one in Change with %s", policyFields, changeTag(c))
	case policies == 1 && s.SetIdentifier == "":
		return errorf(CodeInvalidInput, "Invalid request: Missing field 'SetIdentifier' in Change with %s", changeTag(c))
	case policies == 0 && s.SetIdentifier != "":
		return errorf(CodeInvalidInput, "Invalid request: Expected exactly one of %s, but found none in Change with %s", policyFields, changeTag(c))
	}
	const dataFields = "[AliasTarget, all of [TTL, and ResourceRecords], or TrafficPolicyInstanceId]"
	hasData := s.TTL != nil && len(s.Records) > 0
	switch {
	case s.Alias != nil && (s.TTL != nil || len(s.Records) > 0):
		return errorf(CodeInvalidInput, "Invalid request: Expected exactly one of %s, but found more than one in Change with %s", dataFields, changeTag(c))
	case s.Alias == nil && !hasData:
		return errorf(CodeInvalidInput, "Invalid request: Expected exactly one of %s, but found none in Change with %s", dataFields, changeTag(c))
	}
	if a := s.Alias; a != nil && (a.HostedZoneID == "" || a.DNSName == "") {
		return errorf(CodeInvalidInput, "Invalid request: AliasTarget needs HostedZoneId and DNSName in Change with %s", changeTag(c))
	}
	return nil
}

// parseRecords checks every value of s and returns them parsed, or Route 53's message for
// the first bad one.
func parseRecords(s *RRSet) ([]dns.RR, string) {
	if s.Alias != nil {
		return nil, ""
	}
	if s.Type == "CNAME" && len(s.Records) > 1 {
		return nil, fmt.Sprintf("RRSet of type CNAME with DNS name %s has more than one value", PresentName(s.Name))
	}
	if s.Type == "SOA" && len(s.Records) > 1 {
		return nil, fmt.Sprintf("RRSet of type SOA with DNS name %s has more than one value", PresentName(s.Name))
	}
	rrs := make([]dns.RR, 0, len(s.Records))
	seen := make(map[string]bool, len(s.Records))
	wire := packBuffers.Get().(*[]byte)
	defer packBuffers.Put(wire)
	for _, v := range s.Records {
		if len(v) > MaxValueLength {
			return nil, fmt.Sprintf("Invalid Resource Record: 'FATAL problem: ValueTooLong (Value is longer than %d characters) encountered with '%.40s…''", MaxValueLength, v)
		}
		rr, why := parseValue(s, v)
		if why == "" {
			why = checkRDATA(rr, *wire)
		}
		if why != "" {
			return nil, fmt.Sprintf("Invalid Resource Record: 'FATAL problem: %s encountered with '%s''", why, v)
		}
		canon := rdata(rr)
		if seen[canon] {
			return nil, fmt.Sprintf("Duplicate Resource Record: '%s'", v)
		}
		seen[canon] = true
		rrs = append(rrs, rr)
	}
	internOwner(rrs, s.Name)
	return rrs, ""
}

// packBufferSize is the largest DNS message: a record that does not fit one can never be
// answered. (Rdata can outgrow its value: an SVCB ipv6hint of "::" is 16 octets.)
const packBufferSize = dns.MaxMsgSize

// packBuffers are the scratch space checkRDATA packs records into: a 1,000-record batch
// would otherwise allocate megabytes only to throw them away.
var packBuffers = sync.Pool{New: func() any {
	b := make([]byte, packBufferSize)
	return &b
}}

// parseValue parses one value in zone-file presentation format, as Route 53 accepts it.
func parseValue(s *RRSet, v string) (dns.RR, string) {
	switch s.Type {
	case "A":
		if a, err := netip.ParseAddr(v); err != nil || !a.Is4() {
			return nil, "ARRDATAIllegalIPv4Address (Value is not a valid IPv4 address)"
		}
	case "AAAA":
		if a, err := netip.ParseAddr(v); err != nil || !a.Is6() || a.Is4In6() && strings.Contains(v, ".") {
			return nil, "AAAARRDATAIllegalIPv6Address (Value is not a valid IPv6 address)"
		}
	}
	if strings.ContainsAny(v, "\n\r") {
		return nil, invalidRDATA(s.Type, "")
	}
	if bareSemicolon(v) {
		return nil, invalidRDATA(s.Type, "';' outside quotation marks")
	}
	ttl := int64(0)
	if s.TTL != nil {
		ttl = *s.TTL
	}
	rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", escapeOwner(s.Name), ttl, s.Type, v))
	if err != nil || rr == nil {
		return nil, invalidRDATA(s.Type, "")
	}
	return rr, ""
}

// invalidRDATA is the problem text for a value that is not valid data of its type, with
// what is wrong with it when the sandbox can say.
func invalidRDATA(typ, detail string) string {
	if detail != "" {
		return fmt.Sprintf("InvalidRDATA (Value is not valid %s data: %s)", typ, detail)
	}
	return fmt.Sprintf("InvalidRDATA (Value is not valid %s data)", typ)
}

// bareSemicolon reports whether v holds a ';' outside double quotes. The zone-file parser
// takes such a ';' for the start of a comment and would silently drop the rest of the
// value; inside quotes (TXT "v=1; p=x", CAA 0 issue "ca.example; account=1") it is data,
// as it is to Route 53, and a backslash escapes it anywhere.
func bareSemicolon(v string) bool {
	quoted := false
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++ // the escaped character is data
		case '"':
			quoted = !quoted
		case ';':
			if !quoted {
				return true
			}
		}
	}
	return false
}

// Digest lengths in hexadecimal digits, by algorithm: DS digest types (RFC 4034, 4509,
// 5933, 6605), SSHFP fingerprint types (RFC 4255, 6594) and TLSA matching types (RFC 6698).
var (
	dsDigestHex    = map[uint8]int{1: 40, 2: 64, 3: 64, 4: 96}
	sshfpDigestHex = map[uint8]int{1: 40, 2: 64}
	tlsaDigestHex  = map[uint8]int{1: 64, 2: 128}
)

// checkRDATA applies the rules the zone-file parser leaves to later: hexadecimal fields are
// only decoded when a record is packed, so a value the parser accepts could otherwise be
// stored and then fail every DNS answer that carries it. wire is scratch space for packing.
func checkRDATA(rr dns.RR, wire []byte) string {
	typ := dns.TypeToString[rr.Header().Rrtype]
	switch v := rr.(type) {
	case *dns.DS:
		if why := checkDigest("digest", v.Digest, dsDigestHex[v.DigestType], "digest type", v.DigestType); why != "" {
			return invalidRDATA(typ, why)
		}
	case *dns.SSHFP:
		if why := checkDigest("fingerprint", v.FingerPrint, sshfpDigestHex[v.Type], "fingerprint type", v.Type); why != "" {
			return invalidRDATA(typ, why)
		}
	case *dns.TLSA:
		if why := checkDigest("certificate association data", v.Certificate, tlsaDigestHex[v.MatchingType], "matching type", v.MatchingType); why != "" {
			return invalidRDATA(typ, why)
		}
	case *dns.SVCB:
		if v.Priority == 0 && len(v.Value) > 0 {
			return invalidRDATA(typ, "AliasMode (SvcPriority 0) takes no SvcParams")
		}
	case *dns.HTTPS:
		if v.Priority == 0 && len(v.Value) > 0 {
			return invalidRDATA(typ, "AliasMode (SvcPriority 0) takes no SvcParams")
		}
	}
	if _, err := dns.PackRR(rr, wire, 0, nil, false); err != nil {
		return invalidRDATA(typ, "")
	}
	return ""
}

// checkDigest checks a hexadecimal field; want is its length in digits for the algorithm,
// 0 when the algorithm fixes none.
func checkDigest(field, digest string, want int, algField string, alg uint8) string {
	if _, err := hex.DecodeString(digest); err != nil || digest == "" {
		return field + " is not hexadecimal"
	}
	if want > 0 && len(digest) != want {
		return fmt.Sprintf("%s must be %d hexadecimal digits for %s %d", field, want, algField, alg)
	}
	return ""
}

// escapeOwner keeps a stored owner name parseable by the zone-file parser.
func escapeOwner(name string) string {
	if name == "." {
		return name
	}
	return strings.ReplaceAll(name, " ", `\032`)
}

// rdata is the canonical text of a record's data, used to compare values.
func rdata(rr dns.RR) string {
	full := rr.String()
	hdr := rr.Header().String()
	return strings.ToLower(strings.TrimPrefix(full, hdr))
}

// batchSize counts a batch against Route 53's limits: records and value characters, with an
// UPSERT counted twice.
func batchSize(changes []Change) (records, chars int) {
	for _, c := range changes {
		n, ch := len(c.Set.Records), 0
		if c.Set.Alias != nil {
			n = 1
		}
		for _, v := range c.Set.Records {
			ch += len(v)
		}
		if c.Action == Upsert {
			n, ch = 2*n, 2*ch
		}
		records += n
		chars += ch
	}
	return records, chars
}

// sameSet reports whether a DELETE's set matches the stored one in every field, as Route 53
// requires.
func sameSet(a, b *RRSet) bool {
	if a.Failover != b.Failover || a.HealthCheckID != b.HealthCheckID ||
		!eqPtr(a.Weight, b.Weight) || !eqPtr(a.TTL, b.TTL) {
		return false
	}
	if (a.Alias == nil) != (b.Alias == nil) {
		return false
	}
	if a.Alias != nil {
		return strings.EqualFold(a.Alias.HostedZoneID, b.Alias.HostedZoneID) &&
			CanonicalName(a.Alias.DNSName) == CanonicalName(b.Alias.DNSName) &&
			a.Alias.EvaluateTargetHealth == b.Alias.EvaluateTargetHealth
	}
	if len(a.rrs) != len(b.rrs) {
		return false
	}
	x, y := canonicalValues(a.rrs), canonicalValues(b.rrs)
	return slices.Equal(x, y)
}

func canonicalValues(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = rdata(rr)
	}
	slices.Sort(out)
	return out
}

func eqPtr(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
