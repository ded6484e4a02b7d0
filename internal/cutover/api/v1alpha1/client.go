package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// RESTClient is a REST client for crossfade.io/v1alpha1 on the API server cfg names,
// decoding into Cutover and CutoverList; userAgent names the program when cfg names none.
// The controller, the kubectl plugin and the dashboard all reach Cutovers through it.
func RESTClient(cfg *rest.Config, userAgent string) (rest.Interface, error) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("scheme for %s: %w", GroupVersion, err)
	}
	c := rest.CopyConfig(cfg)
	gv := GroupVersion
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	c.ContentType = runtime.ContentTypeJSON
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = userAgent
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("REST client for %s at %s: %w", gv, cfg.Host, err)
	}
	return rc, nil
}
