package ec2

import (
	"errors"

	bolt "go.etcd.io/bbolt"

	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
)

// Bucket layout, inside the sandbox's state file beside the zones' and ELBv2's buckets:
// ec2/{vpcs,subnets,securitygroups,instances,networkinterfaces}/<id> → the record as
// JSON. One bbolt transaction per write: a declaration or a rule change survives a crash
// wholly or not at all.
var (
	bucketEC2       = []byte("ec2")
	bucketVPCs      = []byte("vpcs")
	bucketSubnets   = []byte("subnets")
	bucketGroups    = []byte("securitygroups")
	bucketInstances = []byte("instances")
	bucketENIs      = []byte("networkinterfaces")
)

type boltState struct{ db *bolt.DB }

func openBolt(db *bolt.DB) (*boltState, error) {
	if err := awsapi.CreateBuckets(db, "ec2", bucketEC2, bucketVPCs, bucketSubnets, bucketGroups, bucketInstances, bucketENIs); err != nil {
		return nil, err
	}
	return &boltState{db: db}, nil
}

func (b *boltState) write(t *txn) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketEC2)
		return errors.Join(
			awsapi.WriteBucket(root, bucketVPCs, t.vpcs),
			awsapi.WriteBucket(root, bucketSubnets, t.subnets),
			awsapi.WriteBucket(root, bucketGroups, t.groups),
			awsapi.WriteBucket(root, bucketInstances, t.instances),
			awsapi.WriteBucket(root, bucketENIs, t.enis),
		)
	})
}

func readInto[T any](root *bolt.Bucket, name []byte, into map[string]*T) error {
	return awsapi.ReadBucket(root, name, func(k string, rec *T) { into[k] = rec })
}

// load fills an unpublished state from the file.
func (b *boltState) load(st *state) error {
	return b.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketEC2)
		return errors.Join(
			readInto(root, bucketVPCs, st.vpcs),
			readInto(root, bucketSubnets, st.subnets),
			readInto(root, bucketGroups, st.groups),
			readInto(root, bucketInstances, st.instances),
			readInto(root, bucketENIs, st.enis),
		)
	})
}
