package awsapi

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The stores keep their records in the sandbox's one bbolt state file, each under a root
// bucket of its own holding one bucket per kind of record, key → the record as JSON. One
// bbolt transaction per API write: a write survives a crash wholly or not at all.

// CreateBuckets creates the bucket root and its sub-buckets subs in db where missing; what
// names the store in the error.
func CreateBuckets(db *bolt.DB, what string, root []byte, subs ...[]byte) error {
	err := db.Update(func(tx *bolt.Tx) error {
		rb, err := tx.CreateBucketIfNotExists(root)
		if err != nil {
			return err
		}
		for _, b := range subs {
			if _, err := rb.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("init %s state in %s: %w", what, db.Path(), err)
	}
	return nil
}

// PutJSON stores v as JSON under key.
func PutJSON(bk *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return bk.Put(key, data)
}

// WriteBucket writes recs into root's bucket name: each record as JSON under its key, and
// a nil record deletes its key.
func WriteBucket[T any](root *bolt.Bucket, name []byte, recs map[string]*T) error {
	bk := root.Bucket(name)
	for k, v := range recs {
		if v == nil {
			if err := bk.Delete([]byte(k)); err != nil {
				return err
			}
			continue
		}
		if err := PutJSON(bk, []byte(k), v); err != nil {
			return err
		}
	}
	return nil
}

// ReadBucket decodes every record of root's bucket name and hands it to put; a record
// that does not decode is an error naming the bucket and the key.
func ReadBucket[T any](root *bolt.Bucket, name []byte, put func(key string, rec *T)) error {
	return root.Bucket(name).ForEach(func(k, v []byte) error {
		rec := new(T)
		if err := json.Unmarshal(v, rec); err != nil {
			return fmt.Errorf("%s %q: %w", name, k, err)
		}
		put(string(k), rec)
		return nil
	})
}
