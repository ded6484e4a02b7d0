package cloudwatchapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
)

// Error codes, as the query protocol and the X-Amzn-Query-Error header carry them.
const (
	codeInvalidParameterValue       = "InvalidParameterValue"
	codeMissingParameter            = "MissingParameter"
	codeInvalidParameterCombination = "InvalidParameterCombination"
	codeInvalidNextToken            = "InvalidNextToken"
	// codeValidation is what GetMetricData answers for a bad request: it models no
	// validation error, and real CloudWatch sends "ValidationError" with one line per
	// problem, each ending in a newline.
	codeValidation     = "ValidationError"
	codeInternal       = "InternalServiceError"
	codeInvalidAction  = "InvalidAction"
	codeMissingAction  = "MissingAction"
	codeMalformedQuery = "MalformedQueryString"
	codeSerialization  = "SerializationException"
)

// shapeOf is the Smithy error shape json and rpc-v2-cbor name in __type; the SDK maps it
// to its typed error (InvalidParameterValueException …) and reports the query code.
var shapeOf = map[string]string{
	codeInvalidParameterValue:       "com.amazonaws.cloudwatch#InvalidParameterValueException",
	codeMissingParameter:            "com.amazonaws.cloudwatch#MissingRequiredParameterException",
	codeInvalidParameterCombination: "com.amazonaws.cloudwatch#InvalidParameterCombinationException",
	codeInvalidNextToken:            "com.amazonaws.cloudwatch#InvalidNextToken",
	codeInternal:                    "com.amazonaws.cloudwatch#InternalServiceFault",
	codeValidation:                  "com.amazon.coral.validate#ValidationException",
	codeInvalidAction:               "com.amazon.coral.service#UnknownOperationException",
	codeMissingAction:               "com.amazon.coral.service#UnknownOperationException",
	codeMalformedQuery:              "com.amazon.coral.service#SerializationException",
	codeSerialization:               "com.amazon.coral.service#SerializationException",
}

// shapeFor names the Smithy error shape of code. The codes the sandbox's injected faults
// answer with (Throttling, InternalFailure, PriorRequestNotComplete) are not CloudWatch's
// own: they get the shapes AWS's front end uses for them, so that the SDKs classify a
// throttle as retryable.
func shapeFor(code string) string {
	if s, ok := shapeOf[code]; ok {
		return s
	}
	if code == faults.Throttled.Code {
		return "com.amazon.coral.availability#ThrottlingException"
	}
	return "com.amazon.coral.service#" + code
}

// apiError is an error answered to the client with its code and message: the sandbox's
// one AWS error type.
type apiError = awsapi.Error

// statusOf is CloudWatch's status for an error that leaves it to the API: 500 for its
// internal fault, 400 for every client error.
func statusOf(e *apiError) int {
	if e.Code == codeInternal {
		return e.StatusOr(http.StatusInternalServerError)
	}
	return e.StatusOr(http.StatusBadRequest)
}

// validationErrors collects GetMetricData's problems into one ValidationError, one line
// each, as CloudWatch reports them.
type validationErrors []string

func (v *validationErrors) add(format string, args ...any) {
	*v = append(*v, fmt.Sprintf(format, args...))
}

func (v validationErrors) err() error {
	if len(v) == 0 {
		return nil
	}
	return &apiError{Code: codeValidation, Message: strings.Join(v, "\n") + "\n"}
}

// unsupported refuses what CloudWatch accepts but the sandbox deliberately does not serve.
// The message says so in the sandbox's own words: one that imitated a CloudWatch
// validation error would send the reader hunting for a mistake in a valid request.
func unsupported(code, format string, args ...any) *apiError {
	return &apiError{Code: code, Message: "The crossfade sandbox does not serve this: " + fmt.Sprintf(format, args...)}
}

// writeError answers err in the request's protocol.
func writeError(w http.ResponseWriter, proto protocol, reqID string, e *apiError) {
	status := statusOf(e)
	fault := awsapi.Fault(status)
	switch proto {
	case protoCBOR, protoJSON:
		// A query-compatible service tells the query code apart in this header: the SDK
		// and botocore report it as the error code.
		w.Header().Set("X-Amzn-Query-Error", e.Code+";"+fault)
		shape := shapeFor(e.Code)
		if proto == protoCBOR {
			w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
			w.Header().Set("Content-Type", "application/cbor")
			w.WriteHeader(status)
			_, _ = w.Write(cbor.Encode(cbor.Map{
				"__type": cbor.String(shape), "message": cbor.String(e.Message), "Message": cbor.String(e.Message),
			}))
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": shape, "message": e.Message, "Message": e.Message})
	default:
		var b bytes.Buffer
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
		fmt.Fprintf(&b, `<ErrorResponse xmlns="%s"><Error><Type>%s</Type><Code>%s</Code><Message>`, xmlNS, fault, e.Code)
		xmlEscape(&b, e.Message)
		fmt.Fprintf(&b, `</Message></Error><RequestId>%s</RequestId></ErrorResponse>`, reqID)
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(status)
		_, _ = w.Write(b.Bytes())
	}
}
