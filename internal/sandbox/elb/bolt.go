package elb

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
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
	err := db.Update(func(tx *bolt.Tx) error {
		root, err := tx.CreateBucketIfNotExists(bucketELB)
		if err != nil {
			return err
		}
		for _, b := range [][]byte{bucketLBs, bucketTGs, bucketListeners, bucketRules} {
			if _, err := root.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("init elbv2 state in %s: %w", db.Path(), err)
	}
	return &boltState{db: db}, nil
}

func writeBucket[T any](root *bolt.Bucket, name []byte, recs map[string]*T) error {
	bk := root.Bucket(name)
	for arn, v := range recs {
		if v == nil {
			if err := bk.Delete([]byte(arn)); err != nil {
				return err
			}
			continue
		}
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := bk.Put([]byte(arn), data); err != nil {
			return err
		}
	}
	return nil
}

func (b *boltState) write(t *txn) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketELB)
		if err := writeBucket(root, bucketLBs, t.lbs); err != nil {
			return err
		}
		if err := writeBucket(root, bucketTGs, t.tgs); err != nil {
			return err
		}
		if err := writeBucket(root, bucketListeners, t.listeners); err != nil {
			return err
		}
		return writeBucket(root, bucketRules, t.rules)
	})
}

func readBucket[T any](root *bolt.Bucket, name []byte, into map[string]*T, seq func(*T) uint64, maxSeq *uint64) error {
	return root.Bucket(name).ForEach(func(k, v []byte) error {
		rec := new(T)
		if err := json.Unmarshal(v, rec); err != nil {
			return fmt.Errorf("%s %s: %w", name, k, err)
		}
		into[string(k)] = rec
		if seq != nil {
			*maxSeq = max(*maxSeq, seq(rec))
		}
		return nil
	})
}

// load fills an unpublished state from the file.
func (b *boltState) load(st *state) error {
	return b.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketELB)
		if err := readBucket(root, bucketLBs, st.lbs, func(r *LoadBalancer) uint64 { return r.Seq }, &st.seq); err != nil {
			return err
		}
		if err := readBucket(root, bucketTGs, st.tgs, func(r *TargetGroup) uint64 { return r.Seq }, &st.seq); err != nil {
			return err
		}
		if err := readBucket(root, bucketListeners, st.listeners, func(r *Listener) uint64 { return r.Seq }, &st.seq); err != nil {
			return err
		}
		return readBucket[Rule](root, bucketRules, st.rules, nil, &st.seq)
	})
}
