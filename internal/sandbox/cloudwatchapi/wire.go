package cloudwatchapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/smithy-go/encoding/cbor"
)

// CloudWatch speaks three protocols (its Smithy model lists smithy-rpc-v2-cbor, json and
// query, and is query-compatible): aws-sdk-go-v2 v1.75 uses rpc-v2-cbor, botocore 1.43+
// (the pyenv aws 1.x) picks json, and the AWS CLI 2.9 of Debian (botocore data of 2023)
// knows only query. All three decode into one generic tree and answer from one output tree.
type protocol int

const (
	protoQuery protocol = iota
	protoJSON
	protoCBOR
)

func (p protocol) String() string {
	return [...]string{"query", "json", "rpc-v2-cbor"}[p]
}

const (
	// apiVersion is the query protocol's Version.
	apiVersion = "2010-08-01"
	// serviceName is the Smithy service shape: rpc-v2-cbor's path segment and the json
	// protocol's X-Amz-Target prefix.
	serviceName = "GraniteServiceVersion20100801"
	cborPrefix  = "/service/" + serviceName + "/operation/"
	xmlNS       = "http://monitoring.amazonaws.com/doc/2010-08-01/"
	// sigV4Service is the service in a signed request's credential scope.
	sigV4Service = "monitoring"
)

// request is a decoded call: its operation and parameters as a tree of map[string]any,
// []any and leaves (string from the query protocol; json.Number, bool, string from json;
// uint64, int64, float64, bool, string, time.Time from CBOR).
type request struct {
	proto  protocol
	op     string
	params map[string]any
}

// detect names the protocol of a request without reading its body.
func detect(r *http.Request) protocol {
	switch {
	case strings.HasPrefix(r.URL.Path, cborPrefix):
		return protoCBOR
	case strings.HasPrefix(r.Header.Get("X-Amz-Target"), serviceName+"."):
		return protoJSON
	default:
		return protoQuery
	}
}

// decode reads a request in its protocol. Errors are answered in that protocol, so proto
// is set even when err is not nil.
func decode(r *http.Request) (*request, error) {
	req := &request{proto: detect(r), params: map[string]any{}}
	// The chain has bounded the body.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return req, &apiError{Code: codeSerialization, Message: fmt.Sprintf("The request body is larger than the sandbox's limit of %d bytes.", mb.Limit)}
		}
		return req, &apiError{Code: codeSerialization, Message: "Could not read the request body: " + err.Error()}
	}
	switch req.proto {
	case protoCBOR:
		req.op = strings.TrimPrefix(r.URL.Path, cborPrefix)
		if len(body) == 0 {
			return req, nil
		}
		v, err := cbor.Decode(body)
		if err != nil {
			return req, &apiError{Code: codeSerialization, Message: "The request body is not valid CBOR: " + err.Error()}
		}
		m, ok := fromCBOR(v).(map[string]any)
		if !ok {
			return req, &apiError{Code: codeSerialization, Message: "The request body is not a CBOR map."}
		}
		req.params = m
	case protoJSON:
		req.op = strings.TrimPrefix(r.Header.Get("X-Amz-Target"), serviceName+".")
		if len(bytes.TrimSpace(body)) == 0 {
			return req, nil
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&req.params); err != nil {
			return req, &apiError{Code: codeSerialization, Message: "The request body is not a JSON object: " + err.Error()}
		}
	case protoQuery:
		form := r.URL.Query()
		if len(body) > 0 {
			bodyForm, err := url.ParseQuery(string(body))
			if err != nil {
				return req, &apiError{Code: codeMalformedQuery, Message: "The request body is not a valid form: " + err.Error()}
			}
			for k, v := range bodyForm {
				form[k] = append(form[k], v...)
			}
		}
		req.op = form.Get("Action")
		if req.op == "" {
			return req, &apiError{Code: codeMissingAction, Message: "The request must contain the parameter Action."}
		}
		if v := form.Get("Version"); v != apiVersion {
			return req, &apiError{Code: codeInvalidAction, Message: fmt.Sprintf("Version %q is not served by the crossfade sandbox's CloudWatch API: it speaks %s only.", v, apiVersion)}
		}
		delete(form, "Action")
		delete(form, "Version")
		params, err := formTree(form)
		if err != nil {
			return req, err
		}
		req.params = params
	}
	return req, nil
}

// formTree turns query parameters ("A.member.1.B=x") into the generic tree, lists from
// the ".member.N" segments, in index order.
func formTree(form url.Values) (map[string]any, error) {
	root := map[string]any{}
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts := strings.Split(k, ".")
		node := root
		for i, part := range parts {
			if i == len(parts)-1 {
				if _, exists := node[part]; exists {
					return nil, &apiError{Code: codeMalformedQuery, Message: fmt.Sprintf("Parameter %s is given both as a value and as a structure.", k)}
				}
				node[part] = form.Get(k)
				break
			}
			child, exists := node[part]
			if !exists {
				child = map[string]any{}
				node[part] = child
			}
			m, ok := child.(map[string]any)
			if !ok {
				return nil, &apiError{Code: codeMalformedQuery, Message: fmt.Sprintf("Parameter %s is given both as a value and as a structure.", k)}
			}
			node = m
		}
	}
	return listify(root), nil
}

// listify replaces each {"member": {"1": x, "2": y}} by [x, y].
func listify(m map[string]any) map[string]any {
	for k, v := range m {
		child, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if members, ok := child["member"].(map[string]any); ok && len(child) == 1 {
			idx := make([]int, 0, len(members))
			byIdx := map[int]any{}
			numeric := true
			for ik, iv := range members {
				n, err := strconv.Atoi(ik)
				if err != nil || n < 1 {
					numeric = false
					break
				}
				idx = append(idx, n)
				byIdx[n] = iv
			}
			if numeric {
				slices.Sort(idx)
				list := make([]any, 0, len(idx))
				for _, n := range idx {
					item := byIdx[n]
					if im, ok := item.(map[string]any); ok {
						item = listify(im)
					}
					list = append(list, item)
				}
				m[k] = list
				continue
			}
		}
		m[k] = listify(child)
	}
	return m
}

// fromCBOR converts a decoded CBOR value into the generic tree.
func fromCBOR(v cbor.Value) any {
	switch x := v.(type) {
	case cbor.Map:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = fromCBOR(e)
		}
		return m
	case cbor.List:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = fromCBOR(e)
		}
		return l
	case cbor.String:
		return string(x)
	case cbor.Uint:
		return uint64(x)
	case cbor.NegInt:
		if x == 0 || uint64(x) > math.MaxInt64 {
			return math.Inf(-1)
		}
		return -int64(x)
	case cbor.Float32:
		return float64(x)
	case cbor.Float64:
		return float64(x)
	case cbor.Bool:
		return bool(x)
	case *cbor.Tag:
		if x.ID == 1 {
			if secs, ok := number(fromCBOR(x.Value)); ok {
				return epoch(secs)
			}
		}
		return x
	default: // Nil, Undefined, byte strings: none are CloudWatch parameters
		return nil
	}
}

// number reads a JSON or CBOR number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case uint64:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func epoch(secs float64) time.Time {
	whole, frac := math.Modf(secs)
	return time.Unix(int64(whole), int64(math.Round(frac*1e3))*int64(time.Millisecond)).UTC()
}

// The output tree: obj keeps member order for XML; entries is a string-keyed map of
// numbers (Datapoint.ExtendedStatistics); leaves are string, float64, time.Time.
type (
	obj    []member
	member struct {
		name string
		v    any
	}
	list    []any
	entries []entry
	entry   struct {
		key string
		v   float64
	}
)

// encodeXML writes a query-protocol response: <OpResponse><OpResult>…</OpResult>
// <ResponseMetadata>…</ResponseMetadata></OpResponse>.
func encodeXML(op, reqID string, out obj) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<%sResponse xmlns="%s"><%sResult>`, op, xmlNS, op)
	writeXMLObj(&b, out)
	fmt.Fprintf(&b, `</%sResult><ResponseMetadata><RequestId>%s</RequestId></ResponseMetadata></%sResponse>`, op, reqID, op)
	return b.Bytes()
}

func writeXMLObj(b *bytes.Buffer, o obj) {
	for _, m := range o {
		b.WriteString("<" + m.name + ">")
		writeXMLValue(b, m.v)
		b.WriteString("</" + m.name + ">")
	}
}

func writeXMLValue(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case obj:
		writeXMLObj(b, x)
	case list:
		for _, e := range x {
			b.WriteString("<member>")
			writeXMLValue(b, e)
			b.WriteString("</member>")
		}
	case entries:
		for _, e := range x {
			b.WriteString("<entry><key>")
			xmlEscape(b, e.key)
			b.WriteString("</key><value>" + formatFloat(e.v) + "</value></entry>")
		}
	case string:
		xmlEscape(b, x)
	case float64:
		b.WriteString(formatFloat(x))
	case time.Time:
		b.WriteString(x.UTC().Format(time.RFC3339))
	}
}

// xmlEscaper escapes text for XML, newlines included: GetMetricData's messages end in one.
var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;", "\n", "&#xA;", "\r", "&#xD;")

func xmlEscape(b *bytes.Buffer, s string) { _, _ = xmlEscaper.WriteString(b, s) }

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// jsonValue converts the output tree for the json protocol: timestamps in epoch seconds.
func jsonValue(v any) any {
	switch x := v.(type) {
	case obj:
		m := make(map[string]any, len(x))
		for _, e := range x {
			m[e.name] = jsonValue(e.v)
		}
		return m
	case list:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = jsonValue(e)
		}
		return l
	case entries:
		m := make(map[string]float64, len(x))
		for _, e := range x {
			m[e.key] = e.v
		}
		return m
	case time.Time:
		return float64(x.UnixMilli()) / 1e3
	default:
		return x
	}
}

// cborValue converts the output tree for rpc-v2-cbor: timestamps as tag 1 epoch seconds.
func cborValue(v any) cbor.Value {
	switch x := v.(type) {
	case obj:
		m := make(cbor.Map, len(x))
		for _, e := range x {
			m[e.name] = cborValue(e.v)
		}
		return m
	case list:
		l := make(cbor.List, len(x))
		for i, e := range x {
			l[i] = cborValue(e)
		}
		return l
	case entries:
		m := make(cbor.Map, len(x))
		for _, e := range x {
			m[e.key] = cbor.Float64(e.v)
		}
		return m
	case string:
		return cbor.String(x)
	case float64:
		return cbor.Float64(x)
	case time.Time:
		return &cbor.Tag{ID: 1, Value: cbor.Float64(float64(x.UnixMilli()) / 1e3)}
	}
	return &cbor.Nil{}
}

// writeOutput answers a successful call in the request's protocol.
func writeOutput(w http.ResponseWriter, req *request, reqID string, out obj) {
	switch req.proto {
	case protoCBOR:
		w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
		w.Header().Set("Content-Type", "application/cbor")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(cbor.Encode(cborValue(out)))
	case protoJSON:
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusOK)
		_ = json.NewEncoder(w).Encode(jsonValue(out))
	default:
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(encodeXML(req.op, reqID, out))
	}
}
