package zones

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/crossfade-io/crossfade/internal/atomicfile"
	"github.com/crossfade-io/crossfade/internal/sandbox/awsapi"
)

// Bucket layout: zones/<id> → Zone; rrsets/<zone id>/<name NUL type NUL set id> → RRSet;
// changes/<id> → ChangeInfo; health/<id> → "0" or "1". One bbolt transaction per API write
// is what makes a batch survive a crash wholly or not at all.
var (
	bucketZones   = []byte("zones")
	bucketRRSets  = []byte("rrsets")
	bucketChanges = []byte("changes")
	bucketHealth  = []byte("health")
)

type boltState struct{ db *bolt.DB }

// lockTimeout is how long opening the state file waits for bbolt's file lock, which
// another process holding the file (a second sandbox given the same --state) keeps.
var lockTimeout = 2 * time.Second

func openBolt(path string) (*boltState, error) {
	_, statErr := os.Stat(path)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		// bbolt says only "timeout": say who holds the lock and what to do.
		return nil, fmt.Errorf("open state %s: another sandbox (or another process) holds this file: stop it, or give this sandbox another --state file", path)
	}
	if err != nil {
		// An os error names the file already ("open PATH: …"); bbolt's own ("invalid
		// database") do not.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("state file: %w", err)
		}
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	// bbolt fsyncs the file it creates and every commit, not the directory entry that
	// names a new file: without this sync a power loss can lose the whole state file.
	if errors.Is(statErr, os.ErrNotExist) {
		if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
			db.Close()
			return nil, fmt.Errorf("create state %s: %w", path, err)
		}
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketZones, bucketRRSets, bucketChanges, bucketHealth} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("init state %s: %w", path, err)
	}
	return &boltState{db: db}, nil
}

func (b *boltState) close() error { return b.db.Close() }

// DB is the open state file, so that the sandbox's other stores (ELBv2) keep their own
// buckets in the same file; nil when the state is kept in memory. Close closes it.
func (s *Store) DB() *bolt.DB {
	if s.db == nil {
		return nil
	}
	return s.db.db
}

func setDBKey(k setKey) []byte { return []byte(k.name + "\x00" + k.typ + "\x00" + k.id) }

func (b *boltState) createZone(z Zone, sets []*RRSet, c ChangeInfo) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		if err := awsapi.PutJSON(tx.Bucket(bucketZones), []byte(z.ID), z); err != nil {
			return err
		}
		rb, err := tx.Bucket(bucketRRSets).CreateBucketIfNotExists([]byte(z.ID))
		if err != nil {
			return err
		}
		for _, s := range sets {
			if err := awsapi.PutJSON(rb, setDBKey(keyOf(s)), s); err != nil {
				return err
			}
		}
		return awsapi.PutJSON(tx.Bucket(bucketChanges), []byte(c.ID), c)
	})
}

func (b *boltState) putZone(z Zone) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		return awsapi.PutJSON(tx.Bucket(bucketZones), []byte(z.ID), z)
	})
}

func (b *boltState) deleteZone(id string, c ChangeInfo) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketZones).Delete([]byte(id)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketRRSets).DeleteBucket([]byte(id)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		return awsapi.PutJSON(tx.Bucket(bucketChanges), []byte(c.ID), c)
	})
}

func (b *boltState) applyBatch(zoneID string, puts []*RRSet, dels []setKey, c ChangeInfo) error {
	return b.db.Update(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketRRSets).Bucket([]byte(zoneID))
		if rb == nil {
			return fmt.Errorf("no record bucket for zone %s", zoneID)
		}
		for _, k := range dels {
			if err := rb.Delete(setDBKey(k)); err != nil {
				return err
			}
		}
		for _, s := range puts {
			if err := awsapi.PutJSON(rb, setDBKey(keyOf(s)), s); err != nil {
				return err
			}
		}
		return awsapi.PutJSON(tx.Bucket(bucketChanges), []byte(c.ID), c)
	})
}

func (b *boltState) putHealth(id string, healthy bool) error {
	v := []byte("0")
	if healthy {
		v = []byte("1")
	}
	return b.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketHealth).Put([]byte(id), v) })
}

// load fills an unpublished store from the file.
func (b *boltState) load(s *Store) error {
	return b.db.View(func(tx *bolt.Tx) error {
		var zones []Zone
		err := tx.Bucket(bucketZones).ForEach(func(k, v []byte) error {
			var z Zone
			if err := json.Unmarshal(v, &z); err != nil {
				return fmt.Errorf("zone %s: %w", k, err)
			}
			zones = append(zones, z)
			return nil
		})
		if err != nil {
			return err
		}
		// Creation order decides which of two same-named zones answers DNS.
		sortZonesByCreation(zones)
		for _, z := range zones {
			zs := newZoneState(z)
			rb := tx.Bucket(bucketRRSets).Bucket([]byte(z.ID))
			if rb != nil {
				err := rb.ForEach(func(k, v []byte) error {
					set := &RRSet{}
					if err := json.Unmarshal(v, set); err != nil {
						return fmt.Errorf("zone %s: record %q: %w", z.Name, k, err)
					}
					rrs, why := parseRecords(set)
					if why != "" {
						return fmt.Errorf("zone %s: record %q: %s", z.Name, k, why)
					}
					set.rrs = rrs
					zs.put(set)
					return nil
				})
				if err != nil {
					return err
				}
			}
			s.addZoneLocked(zs)
		}
		err = tx.Bucket(bucketChanges).ForEach(func(k, v []byte) error {
			var c ChangeInfo
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("change %s: %w", k, err)
			}
			s.changes[c.ID] = c
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketHealth).ForEach(func(k, v []byte) error {
			s.health[string(k)] = string(v) == "1"
			return nil
		})
	})
}
