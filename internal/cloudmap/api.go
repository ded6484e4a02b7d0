package cloudmap

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	sd "github.com/aws/aws-sdk-go-v2/service/servicediscovery"
	"github.com/aws/smithy-go/middleware"

	"github.com/crossfade-io/crossfade/internal/awsconfig"
)

// API is the part of the Cloud Map client the publisher uses: every Cloud Map call it
// makes goes through it, so its methods are exactly the IAM actions it needs
// (deploy/iam-policy-cloudmap.json; test/iam checks the two agree).
type API interface {
	ListNamespaces(ctx context.Context, in *sd.ListNamespacesInput, optFns ...func(*sd.Options)) (*sd.ListNamespacesOutput, error)
	ListServices(ctx context.Context, in *sd.ListServicesInput, optFns ...func(*sd.Options)) (*sd.ListServicesOutput, error)
	ListInstances(ctx context.Context, in *sd.ListInstancesInput, optFns ...func(*sd.Options)) (*sd.ListInstancesOutput, error)
	GetInstance(ctx context.Context, in *sd.GetInstanceInput, optFns ...func(*sd.Options)) (*sd.GetInstanceOutput, error)
	RegisterInstance(ctx context.Context, in *sd.RegisterInstanceInput, optFns ...func(*sd.Options)) (*sd.RegisterInstanceOutput, error)
	DeregisterInstance(ctx context.Context, in *sd.DeregisterInstanceInput, optFns ...func(*sd.Options)) (*sd.DeregisterInstanceOutput, error)
	GetOperation(ctx context.Context, in *sd.GetOperationInput, optFns ...func(*sd.Options)) (*sd.GetOperationOutput, error)
}

var _ API = (*sd.Client)(nil)

// ClientConfig points a Cloud Map client somewhere.
type ClientConfig struct {
	// Endpoint replaces AWS's, e.g. the sandbox's URL; "" uses AWS's.
	Endpoint string
	// Region overrides the configuration chain's (Cloud Map is regional; with none,
	// awsconfig.DefaultRegion).
	Region string
	// MaxRetries is how often the SDK retries a throttled or failed call (awsconfig.Options).
	MaxRetries int
	// APIOptions are added to the client's middleware stack (metrics).
	APIOptions []func(*middleware.Stack) error
}

// NewClient builds a Cloud Map client from the standard AWS configuration chain
// (environment, shared files, web identity, instance metadata) and cfg.
func NewClient(ctx context.Context, cfg ClientConfig) (*sd.Client, error) {
	awsCfg, err := awsconfig.Load(ctx, awsconfig.Options{Region: cfg.Region, MaxRetries: cfg.MaxRetries})
	if err != nil {
		return nil, fmt.Errorf("cloud map: %w", err)
	}
	return sd.NewFromConfig(awsCfg, func(o *sd.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.APIOptions = append(o.APIOptions, cfg.APIOptions...)
	}), nil
}
