package kubetest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/child"
)

// TestRestartAPIServer: the restarted server is a new process on the same port and
// etcd (what was written before is still there), and the old one is gone.
func TestRestartAPIServer(t *testing.T) {
	c := Start(t)
	cs := c.Clientset(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Namespace: "default"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	old := c.apiserver.Pid()
	c.RestartAPIServer(t)
	if c.apiserver.Pid() == old || child.GroupAlive(old) {
		t.Fatalf("kube-apiserver pid %d before the restart, %d after; the old one alive: %v", old, c.apiserver.Pid(), child.GroupAlive(old))
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(t.Context(), "before", metav1.GetOptions{}); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
}
