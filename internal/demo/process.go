package demo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/crossfade-io/crossfade/internal/child"
)

// startController runs bin with args and env in its own process group, its output in
// a new file at logPath.
func startController(bin string, args, env []string, logPath string) (*child.Process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, fmt.Errorf("controller log: %w", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	return child.Start(cmd, logPath)
}

// controllerEnv is the controllers' environment: the demo's, without AWS_* and KUBECONFIG
// (a profile or endpoint of the user's must not redirect them), plus the throw-away
// credentials the sandbox accepts; an AWS client refuses to sign without any.
func controllerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			env = append(env, kv)
		}
	}
	return append(env, "AWS_ACCESS_KEY_ID="+accessKey, "AWS_SECRET_ACCESS_KEY="+secretKey, "AWS_EC2_METADATA_DISABLED=true")
}
