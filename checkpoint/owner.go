package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/internal/objstore"
)

// ErrFenced is matched (errors.Is) by the error of a process whose claim
// on a job's checkpoints in an object store another process superseded:
// it must not complete a checkpoint, commit output or restart the job.
// The error is a *FencedError saying who took over.
var ErrFenced = errors.New("fenced: another process took over the job")

// Owner is one claim on a job's checkpoints in an object store: the
// process that made it, and when.
type Owner struct {
	// Epoch numbers the claims of a job, from 1; a higher epoch supersedes
	// every lower one.
	Epoch int64  `json:"epoch"`
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	// ProcessStart is when the process that claimed started.
	ProcessStart time.Time `json:"process_start"`
	Claimed      time.Time `json:"claimed"`
}

func (o Owner) String() string {
	return fmt.Sprintf("owner epoch %d (host %s, pid %d, process started %s, claimed %s)", o.Epoch, o.Host, o.PID,
		o.ProcessStart.UTC().Format(time.RFC3339), o.Claimed.UTC().Format(time.RFC3339))
}

// FencedError is the error of a fenced owner: Mine is the claim of this
// process, By the newest claim, which superseded it.
type FencedError struct {
	Where    string
	Mine, By Owner
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("%v: %s took over the job's checkpoints in %s; this process holds owner epoch %d and stops without completing checkpoints or committing output",
		ErrFenced, e.By, e.Where, e.Mine.Epoch)
}

func (e *FencedError) Is(target error) bool { return target == ErrFenced }

// processStart is when this process started (as near as a package's
// initialization tells).
var processStart = time.Now()

// ownerKey is the object of the claim of epoch e; baseKey the object that
// records the newest checkpoint the claimant saw once it had claimed.
func ownerKey(e int64) string { return fmt.Sprintf("owner/%020d", e) }
func baseKey(e int64) string  { return fmt.Sprintf("owner/%020d.base", e) }

// claims are the owner epochs in the store: each claim's epoch, and for
// the claims whose base is recorded, that base.
type claims struct {
	newest int64
	bases  map[int64]int64
}

// claimsIn lists the claims in store, and reads the bases of those above
// epoch basesAbove (one small read each; -1: none; the newest epoch alone
// is one listing).
func claimsIn(ctx context.Context, store objstore.Store, basesAbove int64) (claims, error) {
	objs, err := store.List(ctx, "owner/")
	if err != nil {
		return claims{}, err
	}
	c := claims{bases: map[int64]int64{}}
	for _, o := range objs {
		name := strings.TrimPrefix(o.Key, "owner/")
		num, isBase := strings.CutSuffix(name, ".base")
		e, err := strconv.ParseInt(num, 10, 64)
		if err != nil || e <= 0 {
			continue
		}
		if !isBase {
			c.newest = max(c.newest, e)
			continue
		}
		if basesAbove < 0 || e <= basesAbove {
			continue
		}
		b, err := readSmall(ctx, store, o.Key)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return claims{}, err
		}
		id, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return claims{}, fmt.Errorf("%w: %s/%s: %q is not a checkpoint id", ErrCorrupt, store, o.Key, b)
		}
		c.bases[e] = id
	}
	return c, nil
}

// valid reports whether a checkpoint of id written by owner epoch epoch
// may be restored: no later claim that recorded its base saw a newest
// checkpoint below id. A checkpoint above such a base was written by a
// superseded owner after the claim, which that owner never commits (its
// check after the write sees the claim), and the new owner, restored from
// an older one, has aborted its transactions.
func (c claims) valid(id, epoch int64) bool {
	for e, base := range c.bases {
		if e > epoch && id > base {
			return false
		}
	}
	return true
}

func readSmall(ctx context.Context, store objstore.Store, key string) ([]byte, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, 1<<16))
}

// Claim makes this process the owner of the job's checkpoints in the
// object store: it writes the claim of the next owner epoch
// (owner/<epoch>, create-if-absent, holding o with host, pid and times),
// then lists the checkpoints and records the newest
// (owner/<epoch>.base). From then on, a process holding a lower epoch
// fails to complete checkpoints with ErrFenced, and the checkpoints it
// writes after the claim are never restored (Completed leaves them out).
// Call it before Completed, so that the restore sees every checkpoint a
// superseded owner may have committed. Without an object store it does
// nothing and returns the zero Owner.
func (s *Storage) Claim(ctx context.Context) (Owner, error) {
	if s.remote == nil {
		return Owner{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, remoteCallTimeout)
	defer cancel()
	host, _ := os.Hostname()
	r := s.remote
	for attempt := 0; ; attempt++ {
		c, err := claimsIn(ctx, r.store, -1)
		if err != nil {
			return Owner{}, fmt.Errorf("claiming the job's checkpoints in %s: %w", r.store, err)
		}
		o := Owner{Epoch: c.newest + 1, Host: host, PID: os.Getpid(), ProcessStart: processStart, Claimed: time.Now()}
		data, err := json.Marshal(o)
		if err != nil {
			return Owner{}, err
		}
		err = r.store.PutIfAbsent(ctx, ownerKey(o.Epoch), data)
		if errors.Is(err, objstore.ErrExists) && attempt < 10 {
			continue // another process claimed that epoch meanwhile
		}
		if err != nil {
			return Owner{}, fmt.Errorf("claiming the job's checkpoints in %s: %w", r.store, err)
		}
		_, withMeta, err := r.ids(ctx)
		if err != nil {
			return Owner{}, fmt.Errorf("claiming the job's checkpoints in %s: %w", r.store, err)
		}
		var base int64
		if len(withMeta) > 0 {
			base = withMeta[0]
		}
		b := []byte(strconv.FormatInt(base, 10) + "\n")
		if err := r.store.Put(ctx, baseKey(o.Epoch), strings.NewReader(string(b)), int64(len(b))); err != nil {
			return Owner{}, fmt.Errorf("claiming the job's checkpoints in %s: %w", r.store, err)
		}
		r.mu.Lock()
		r.owner = o
		r.mu.Unlock()
		return o, nil
	}
}

// Owner is the claim this process holds on the job's checkpoints in the
// object store (the zero Owner without a claim).
func (s *Storage) Owner() Owner {
	if s.remote == nil {
		return Owner{}
	}
	s.remote.mu.Lock()
	defer s.remote.mu.Unlock()
	return s.remote.owner
}

// CheckOwner returns a *FencedError (ErrFenced) if another process
// claimed the job's checkpoints after this one's claim, nil if not (or
// without a claim), or the error of the object store.
func (s *Storage) CheckOwner(ctx context.Context) error {
	if s.remote == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, remoteCallTimeout)
	defer cancel()
	return s.remote.checkOwner(ctx)
}

func (r *remote) checkOwner(ctx context.Context) error {
	r.mu.Lock()
	mine := r.owner
	r.mu.Unlock()
	return r.checkOwnerAs(ctx, mine)
}

// checkOwnerLocked is checkOwner called with mu held.
func (r *remote) checkOwnerLocked(ctx context.Context) error { return r.checkOwnerAs(ctx, r.owner) }

func (r *remote) checkOwnerAs(ctx context.Context, mine Owner) error {
	if mine.Epoch == 0 {
		return nil
	}
	c, err := claimsIn(ctx, r.store, -1)
	if err != nil {
		return fmt.Errorf("checking the job's owner in %s: %w", r.store, err)
	}
	if c.newest <= mine.Epoch {
		return nil
	}
	by := Owner{Epoch: c.newest}
	if data, err := readSmall(ctx, r.store, ownerKey(c.newest)); err == nil {
		_ = json.Unmarshal(data, &by)
	}
	return &FencedError{Where: r.store.String(), Mine: mine, By: by}
}
