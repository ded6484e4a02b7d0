package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/crossfade-io/crossfade/internal/source"
)

// API groups of the kinds read.
const (
	groupCore        = ""
	groupNetworking  = "networking.k8s.io"
	groupExternalDNS = "externaldns.k8s.io"
	groupGateway     = "gateway.networking.k8s.io"
	groupDiscovery   = "discovery.k8s.io"
)

// defaultNamespace is where kubectl puts a namespaced object that names none.
const defaultNamespace = "default"

// Decode reads every document of one stream; name labels its errors. The error is for
// read failures only; bad documents are in Loaded.Errors.
func Decode(r io.Reader, name string) (*Loaded, error) {
	l := &Loaded{Snapshot: &source.Snapshot{}}
	return l, l.decode(r, name)
}

func (l *Loaded) decode(r io.Reader, name string) error {
	yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for index := 1; ; index++ {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("manifest: %s: document %d: %w", name, index, err)
		}
		l.document(doc, name, index)
	}
}

// header is the part of every object read before its kind is known.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

func (l *Loaded) document(doc []byte, file string, index int) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		l.Errors = append(l.Errors, &DocumentError{File: file, Index: index, Err: err})
		return
	}
	js = bytes.TrimSpace(js)
	if len(js) == 0 || string(js) == "null" {
		return // empty document, e.g. only comments
	}
	h, derr := readHeader(js, file, index, 0)
	if derr != nil {
		l.Errors = append(l.Errors, derr)
		return
	}
	if h.Kind == "List" || strings.HasSuffix(h.Kind, "List") && h.Items != nil {
		for i, item := range h.Items {
			ih, derr := readHeader(item, file, index, i+1)
			if derr != nil {
				l.Errors = append(l.Errors, derr)
				continue
			}
			l.object(item, ih, file, index, i+1)
		}
		return
	}
	l.object(js, h, file, index, 0)
}

func readHeader(js []byte, file string, index, item int) (*header, *DocumentError) {
	var h header
	if err := json.Unmarshal(js, &h); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			err = fmt.Errorf("not a Kubernetes object: want a mapping with apiVersion and kind, got a %s", te.Value)
		}
		return nil, &DocumentError{File: file, Index: index, Item: item, Err: err}
	}
	if h.APIVersion == "" || h.Kind == "" {
		return nil, &DocumentError{File: file, Index: index, Item: item, Kind: h.Kind,
			Namespace: h.Metadata.Namespace, Name: h.Metadata.Name, Err: errors.New("apiVersion and kind are required")}
	}
	return &h, nil
}

// object decodes one object of a known kind into the snapshot, or notes it as ignored.
func (l *Loaded) object(js []byte, h *header, file string, index, item int) {
	group, _, found := strings.Cut(h.APIVersion, "/")
	if !found {
		group = groupCore
	}
	s := l.Snapshot
	var err error
	switch {
	case group == groupCore && h.Kind == "Service":
		err = add(js, &s.Services, namespaced)
	case group == groupNetworking && h.Kind == "Ingress":
		err = add(js, &s.Ingresses, namespaced)
	case group == groupExternalDNS && h.Kind == "DNSEndpoint":
		err = add(js, &s.DNSEndpoints, namespaced)
	case group == source.IstioGroup && h.Kind == "Gateway":
		err = add(js, &s.IstioGateways, namespaced)
	case group == source.IstioGroup && h.Kind == "VirtualService":
		err = add(js, &s.IstioVirtualServices, namespaced)
	case group == groupGateway && h.Kind == "Gateway":
		err = add(js, &s.Gateways, namespaced)
	case group == groupGateway && h.Kind == "HTTPRoute":
		err = add(js, &s.HTTPRoutes, namespaced)
	case group == groupGateway && h.Kind == "GRPCRoute":
		err = add(js, &s.GRPCRoutes, namespaced)
	case group == groupCore && h.Kind == "Node":
		err = add(js, &s.Nodes, clusterScoped)
	case group == groupCore && h.Kind == "Namespace":
		err = add(js, &s.Namespaces, clusterScoped)
	case group == groupDiscovery && h.Kind == "EndpointSlice":
		err = add(js, &s.EndpointSlices, namespaced)
	default:
		l.Ignored = append(l.Ignored, Ignored{File: file, Index: index, Item: item, APIVersion: h.APIVersion, Kind: h.Kind})
		return
	}
	if err != nil {
		l.Errors = append(l.Errors, &DocumentError{File: file, Index: index, Item: item, Kind: h.Kind,
			Namespace: h.Metadata.Namespace, Name: h.Metadata.Name, Err: err})
	}
}

// scope says whether an object lives in a namespace, which defaults as kubectl's does.
type scope bool

const (
	namespaced    scope = true
	clusterScoped scope = false
)

// object is what every decoded kind is: a pointer with ObjectMeta accessors.
type object interface {
	GetName() string
	GetNamespace() string
	SetNamespace(string)
}

// add decodes js into a new T and appends it to list. The pointer constraint lets one
// function serve every kind.
func add[T any, P interface {
	*T
	object
}](js []byte, list *[]P, sc scope) error {
	obj := P(new(T))
	if err := json.Unmarshal(js, obj); err != nil {
		return err
	}
	if obj.GetName() == "" {
		return errors.New("metadata.name is required")
	}
	if sc == namespaced && obj.GetNamespace() == "" {
		obj.SetNamespace(defaultNamespace)
	}
	*list = append(*list, obj)
	return nil
}

// Compile-time checks that the decoded kinds satisfy object.
var (
	_ object = (*corev1.Service)(nil)
	_ object = (*networkingv1.Ingress)(nil)
	_ object = (*gatewayv1.HTTPRoute)(nil)
	_ object = (*source.DNSEndpoint)(nil)
	_ object = (*source.IstioGateway)(nil)
	_ object = (*discoveryv1.EndpointSlice)(nil)
)
