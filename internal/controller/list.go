package controller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// listPage is how many objects one list request of an informer asks for.
const listPage = 500

// listFunc lists one kind through a typed client.
type listFunc = cache.ListWithContextFunc

// watchFunc watches one kind through a typed client.
type watchFunc = cache.WatchFuncWithContext

// pagedListWatch is an informer's ListerWatcher whose list is read in pages, each page
// stripped before the next is requested.
//
// Why: an informer's first list asks for resourceVersion 0, which the API server answers
// from its watch cache in one response however large: at 10,000 EndpointSlices or Pods
// that is tens of megabytes of JSON, decoded whole (managed fields and all) before the
// informer's transform strips a single object. The controller's peak memory was that
// moment. A consistent read (resourceVersion "") honours limit, so the whole list never
// exists unstripped: only one page at a time does. The price is that the list is read
// from etcd rather than the watch cache, once at start and after a watch expires.
func pagedListWatch(list listFunc, watchFn watchFunc, strip func(any) (any, error)) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return listStripped(ctx, opts, list, strip)
		},
		WatchFuncWithContext: watchFn,
	}
}

// listStripped reads every page of a list, strips each object as its page arrives, and
// returns one list holding them all at the resource version the first page was read at
// (a paginated list is one consistent snapshot).
func listStripped(ctx context.Context, opts metav1.ListOptions, list listFunc, strip func(any) (any, error)) (runtime.Object, error) {
	opts.ResourceVersion, opts.ResourceVersionMatch, opts.Continue = "", "", ""
	opts.Limit = listPage
	var (
		first runtime.Object
		items []runtime.Object
	)
	for {
		page, err := list(ctx, opts)
		if err != nil {
			return nil, err
		}
		objs, err := meta.ExtractList(page)
		if err != nil {
			return nil, fmt.Errorf("read list page: %w", err)
		}
		for _, o := range objs {
			s, err := strip(o)
			if err != nil {
				return nil, err
			}
			items = append(items, s.(runtime.Object))
		}
		acc, err := meta.ListAccessor(page)
		if err != nil {
			return nil, fmt.Errorf("read list page: %w", err)
		}
		if first == nil {
			first = page
		}
		if acc.GetContinue() == "" {
			break
		}
		opts.Continue = acc.GetContinue()
	}
	if err := meta.SetList(first, items); err != nil {
		return nil, fmt.Errorf("assemble list: %w", err)
	}
	acc, err := meta.ListAccessor(first)
	if err != nil {
		return nil, fmt.Errorf("assemble list: %w", err)
	}
	acc.SetContinue("")
	acc.SetRemainingItemCount(nil)
	return first, nil
}
