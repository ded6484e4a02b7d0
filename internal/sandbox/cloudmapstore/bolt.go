package cloudmapstore

import (
	"errors"

	bolt "go.etcd.io/bbolt"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
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
	if err := awsapi.CreateBuckets(db, "servicediscovery", bucketRoot, bucketNamespaces, bucketServices, bucketInstances, bucketOperations); err != nil {
		return nil, err
	}
	return &boltState{db: db}, nil
}

func instanceKey(serviceID, id string) string { return serviceID + "\x00" + id }

func (b *boltState) write(c *change) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketRoot)
		return errors.Join(
			awsapi.WriteBucket(root, bucketNamespaces, c.namespaces),
			awsapi.WriteBucket(root, bucketServices, c.services),
			awsapi.WriteBucket(root, bucketInstances, c.instances),
			awsapi.WriteBucket(root, bucketOperations, c.operations),
		)
	})
}

// load fills an unpublished store from the file.
func (b *boltState) load(s *Store) error {
	return b.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketRoot)
		return errors.Join(
			awsapi.ReadBucket(root, bucketNamespaces, func(_ string, n *Namespace) { s.namespaces[n.ID] = n }),
			awsapi.ReadBucket(root, bucketServices, func(_ string, v *Service) { s.services[v.ID] = v }),
			awsapi.ReadBucket(root, bucketInstances, func(_ string, i *Instance) { s.putInstanceLocked(i) }),
			awsapi.ReadBucket(root, bucketOperations, func(_ string, o *Operation) { s.operations[o.ID] = o }),
		)
	})
}
