package elb

import (
	"errors"

	bolt "go.etcd.io/bbolt"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
)

// Bucket layout, inside the sandbox's state file beside the zones' buckets:
// elbv2/{loadbalancers,targetgroups,listeners,rules}/<ARN> → the record as JSON. One bbolt
// transaction per API write: a write survives a crash wholly or not at all.
var (
	bucketELB       = []byte("elbv2")
	bucketLBs       = []byte("loadbalancers")
	bucketTGs       = []byte("targetgroups")
	bucketListeners = []byte("listeners")
	bucketRules     = []byte("rules")
)

type boltState struct{ db *bolt.DB }

func openBolt(db *bolt.DB) (*boltState, error) {
	if err := awsapi.CreateBuckets(db, "elbv2", bucketELB, bucketLBs, bucketTGs, bucketListeners, bucketRules); err != nil {
		return nil, err
	}
	return &boltState{db: db}, nil
}

func (b *boltState) write(t *txn) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketELB)
		return errors.Join(
			awsapi.WriteBucket(root, bucketLBs, t.lbs),
			awsapi.WriteBucket(root, bucketTGs, t.tgs),
			awsapi.WriteBucket(root, bucketListeners, t.listeners),
			awsapi.WriteBucket(root, bucketRules, t.rules),
		)
	})
}

// readBucket reads one kind of record into into, keeping the highest Seq in maxSeq.
func readBucket[T any](root *bolt.Bucket, name []byte, into map[string]*T, seq func(*T) uint64, maxSeq *uint64) error {
	return awsapi.ReadBucket(root, name, func(k string, rec *T) {
		into[k] = rec
		if seq != nil {
			*maxSeq = max(*maxSeq, seq(rec))
		}
	})
}

// load fills an unpublished state from the file.
func (b *boltState) load(st *state) error {
	return b.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketELB)
		return errors.Join(
			readBucket(root, bucketLBs, st.lbs, func(r *LoadBalancer) uint64 { return r.Seq }, &st.seq),
			readBucket(root, bucketTGs, st.tgs, func(r *TargetGroup) uint64 { return r.Seq }, &st.seq),
			readBucket(root, bucketListeners, st.listeners, func(r *Listener) uint64 { return r.Seq }, &st.seq),
			readBucket[Rule](root, bucketRules, st.rules, nil, &st.seq),
		)
	})
}
