package cloudmap

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Bucket layout, inside the sandbox's state file beside the zones' and the ELBv2 buckets:
// servicediscovery/{namespaces,services,operations}/<id> and
// servicediscovery/instances/<service id> NUL <instance id> → the record as JSON. One
// bbolt transaction per change: a change survives a crash wholly or not at all.
var (
	bucketRoot       = []byte("servicediscovery")
	bucketNamespaces = []byte("namespaces")
	bucketServices   = []byte("services")
	bucketInstances  = []byte("instances")
	bucketOperations = []byte("operations")
)

type boltState struct{ db *bolt.DB }

func openBolt(db *bolt.DB) (*boltState, error) {
	err := db.Update(func(tx *bolt.Tx) error {
		root, err := tx.CreateBucketIfNotExists(bucketRoot)
		if err != nil {
			return err
		}
		for _, b := range [][]byte{bucketNamespaces, bucketServices, bucketInstances, bucketOperations} {
			if _, err := root.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("init servicediscovery state in %s: %w", db.Path(), err)
	}
	return &boltState{db: db}, nil
}

func instanceKey(serviceID, id string) string { return serviceID + "\x00" + id }

func writeBucket[T any](root *bolt.Bucket, name []byte, recs map[string]*T) error {
	bk := root.Bucket(name)
	for k, v := range recs {
		if v == nil {
			if err := bk.Delete([]byte(k)); err != nil {
				return err
			}
			continue
		}
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := bk.Put([]byte(k), data); err != nil {
			return err
		}
	}
	return nil
}

func (b *boltState) write(c *change) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketRoot)
		if err := writeBucket(root, bucketNamespaces, c.namespaces); err != nil {
			return err
		}
		if err := writeBucket(root, bucketServices, c.services); err != nil {
			return err
		}
		if err := writeBucket(root, bucketInstances, c.instances); err != nil {
			return err
		}
		return writeBucket(root, bucketOperations, c.operations)
	})
}

func readBucket[T any](root *bolt.Bucket, name []byte, put func(*T)) error {
	return root.Bucket(name).ForEach(func(k, v []byte) error {
		rec := new(T)
		if err := json.Unmarshal(v, rec); err != nil {
			return fmt.Errorf("%s %q: %w", name, k, err)
		}
		put(rec)
		return nil
	})
}

// load fills an unpublished store from the file.
func (b *boltState) load(s *Store) error {
	return b.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketRoot)
		if err := readBucket(root, bucketNamespaces, func(n *Namespace) { s.namespaces[n.ID] = n }); err != nil {
			return err
		}
		if err := readBucket(root, bucketServices, func(v *Service) { s.services[v.ID] = v }); err != nil {
			return err
		}
		if err := readBucket(root, bucketInstances, func(i *Instance) { s.putInstanceLocked(i) }); err != nil {
			return err
		}
		return readBucket(root, bucketOperations, func(o *Operation) { s.operations[o.ID] = o })
	})
}
