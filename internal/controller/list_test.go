package controller

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossfade-io/crossfade/internal/kubetest"
)

// TestListStrippedPages: the list is read page by page as a consistent read (resource
// version "", limit listPage, the continue token followed), each object stripped, and
// returned as one list at the first page's resource version with no continue token left.
func TestListStrippedPages(t *testing.T) {
	for _, n := range []int{0, 1, listPage, listPage + 1, 3*listPage + 7} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var asked []metav1.ListOptions
			list := func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
				asked = append(asked, o)
				from := 0
				if o.Continue != "" {
					from, _ = strconv.Atoi(o.Continue)
				}
				page := &corev1.ServiceList{ListMeta: metav1.ListMeta{ResourceVersion: fmt.Sprint(100 + len(asked))}}
				to := min(n, from+int(o.Limit))
				for i := from; i < to; i++ {
					page.Items = append(page.Items, corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("s", i),
						ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}})
				}
				if to < n {
					page.Continue = strconv.Itoa(to)
				}
				return page, nil
			}
			got, err := listStripped(t.Context(), metav1.ListOptions{ResourceVersion: "0", Limit: 500}, list, strip)
			if err != nil {
				t.Fatal(err)
			}
			l := got.(*corev1.ServiceList)
			if len(l.Items) != n {
				t.Fatalf("%d items, want %d", len(l.Items), n)
			}
			for i, s := range l.Items {
				if s.Name != fmt.Sprint("s", i) || s.ManagedFields != nil {
					t.Fatalf("item %d: %s, managedFields %v: want s%d stripped", i, s.Name, s.ManagedFields, i)
				}
			}
			if l.ResourceVersion != "101" || l.Continue != "" {
				t.Errorf("list at %q continue %q, want the first page's 101 and none", l.ResourceVersion, l.Continue)
			}
			if want := max(1, (n+listPage-1)/listPage); len(asked) != want {
				t.Errorf("%d requests, want %d", len(asked), want)
			}
			for _, o := range asked {
				if o.ResourceVersion != "" || o.Limit != listPage {
					t.Errorf("asked resourceVersion %q limit %d: want a consistent read of %d", o.ResourceVersion, o.Limit, listPage)
				}
			}
		})
	}
}

// TestWatcherListsInPagesFromAPIServer: on a real kube-apiserver, a Watcher over more
// Services than one page holds sees every one of them, stripped, and then the next one
// created (the watch starts from the list's resource version: nothing is missed between).
func TestWatcherListsInPagesFromAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	kube := kubetest.Start(t)
	client := kube.Clientset(t)
	ctx := t.Context()
	const n = 2*listPage + 3
	svc := func(i int) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("svc-", i), Namespace: "default",
			Annotations: map[string]string{lastApplied: "{}"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if _, err := client.CoreV1().Services("default").Create(ctx, svc(i), metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	w, err := NewWatcher(client, nil, WatchConfig{Sources: []string{SourceService}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	snap, complete := w.Snapshot()
	if !complete {
		t.Fatal("snapshot incomplete after Run")
	}
	seen := 0
	for _, s := range snap.Services {
		if s.Namespace != "default" || s.Name == "kubernetes" {
			continue
		}
		seen++
		if s.ManagedFields != nil || s.Annotations[lastApplied] != "" {
			t.Fatalf("%s/%s cached unstripped", s.Namespace, s.Name)
		}
	}
	if seen != n {
		t.Fatalf("cached %d Services, want %d", seen, n)
	}
	if _, err := client.CoreV1().Services("default").Create(ctx, svc(n), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case <-ctx.Done():
			t.Fatal("the Service created after the list never reached the cache")
		case <-w.Changed():
		}
		if w.UID("Service", "default", fmt.Sprint("svc-", n)) != "" {
			return
		}
	}
}
