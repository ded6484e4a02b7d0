// Command crossfade-parity-extdns records what the pinned external-dns v0.21.0's service
// source publishes for each case in the parent directory (../NN-name.yaml): its own
// NewServiceSource, with its EndpointSlice, Pod and Node informers, over a fake clientset
// holding the case's objects. The output, ../NN-name.golden, is what crossfade's source
// must publish from the same objects without the Pods (see ../../../parity_test.go).
//
// Usage (from internal/source/testdata/parity/extdns):
//
//	GOWORK=off go run . -cases ..
//
// This is a module of its own inside testdata, so the main module never builds it and
// external-dns never enters crossfade's go.mod.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	logrus "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/source"
)

// caseConfigMap is the ConfigMap in each case that holds its description and flags.
const caseConfigMap = "parity-case"

func main() {
	dir := flag.String("cases", "..", "directory of NN-name.yaml cases; goldens are written beside them")
	verbose := flag.Bool("v", false, "external-dns debug log")
	flag.Parse()
	logrus.SetLevel(logrus.WarnLevel)
	if *verbose {
		logrus.SetLevel(logrus.DebugLevel)
	}
	files, err := filepath.Glob(filepath.Join(*dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		log.Fatalf("no cases in %s: %v", *dir, err)
	}
	for _, f := range files {
		out, err := run(f)
		if err != nil {
			log.Fatalf("%s: %v", f, err)
		}
		golden := strings.TrimSuffix(f, ".yaml") + ".golden"
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d records\n", filepath.Base(golden), strings.Count(out, "\n"))
	}
}

func run(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var objs []runtime.Object
	cfg := &source.Config{LabelFilter: labels.Everything(), ExcludeUnschedulable: true}
	yr := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return "", err
		}
		if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == caseConfigMap {
			if cfg.PublishHostIP, err = flagValue(cm, "publishHostIP"); err != nil {
				return "", err
			}
			if cfg.AlwaysPublishNotReadyAddresses, err = flagValue(cm, "alwaysPublishNotReadyAddresses"); err != nil {
				return "", err
			}
			continue
		}
		objs = append(objs, obj)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src, err := source.NewServiceSource(ctx, fake.NewClientset(objs...), cfg)
	if err != nil {
		return "", err
	}
	eps, err := src.Endpoints(ctx)
	if err != nil {
		return "", err
	}
	lines := make([]string, 0, len(eps))
	for _, e := range eps {
		lines = append(lines, render(e))
	}
	slices.Sort(lines)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

func flagValue(cm *corev1.ConfigMap, key string) (bool, error) {
	v, ok := cm.Data[key]
	if !ok {
		return false, nil
	}
	return strconv.ParseBool(v)
}

// render prints one endpoint as parity_test.go prints crossfade's: name, type, sorted
// targets, TTL, set identifier, provider-specific properties sorted, resource label.
func render(e *endpoint.Endpoint) string {
	targets := slices.Clone([]string(e.Targets))
	slices.Sort(targets)
	var props []string
	for _, p := range e.ProviderSpecific {
		props = append(props, p.Name+"="+p.Value)
	}
	slices.Sort(props)
	return fmt.Sprintf("%s %s %s ttl=%d set=%s props=%s %s", e.DNSName, e.RecordType, strings.Join(targets, ","),
		e.RecordTTL, e.SetIdentifier, strings.Join(props, ";"), e.Labels[endpoint.ResourceLabelKey])
}
