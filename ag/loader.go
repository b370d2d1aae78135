package ag

import (
	"math/rand/v2"

	"github.com/gml-dev/gml/data"
	"github.com/gml-dev/gml/tensor"
)

// DataLoader serves mini-batches of host data (tensors, or the train and test tensors
// of a data.Dataset) as constants, epoch after epoch:
//
//	dl := ag.NewDataLoader(ds.TrainX, ds.TrainY, 32, ag.Shuffle(1))
//	for dl.Next() {
//		x, y := dl.Batch()
//		...
//	}
//
// Next returns false at the end of an epoch and starts the next one (reshuffled) on the
// following call.
type DataLoader struct {
	x, y     *tensor.Tensor
	batch    int
	shuffle  bool
	dropLast bool
	rng      *rand.Rand
	order    []int
	pos      int
	epoch    int
	inEpoch  bool
	bx, by   *Tensor
}

// Shuffle makes a DataLoader visit the samples in a new random order each epoch, drawn
// from seed.
func Shuffle(seed uint64) Option {
	return option("Shuffle", func(s *settings) { s.shuffleSeed, s.shuffle = seed, true })
}

// DropLast makes a DataLoader skip the last batch of an epoch when it is short.
func DropLast() Option { return option("DropLast", func(s *settings) { s.dropLast = true }) }

// NewDataLoader serves batches of batch samples of x (and y, which may be nil), whose
// first axis counts samples.
func NewDataLoader(x, y *tensor.Tensor, batch int, opts ...Option) *DataLoader {
	var s settings
	s.apply("data_loader", []string{"Shuffle", "DropLast"}, opts)
	positive("data_loader", "batch size", batch)
	if x == nil || x.Shape().Rank() == 0 {
		fail("data_loader", "x needs a sample axis")
	}
	n := x.Shape()[0]
	if y != nil && (y.Shape().Rank() == 0 || y.Shape()[0] != n) {
		fail("data_loader", "x has %d samples, y has shape %v", n, y.Shape())
	}
	if n == 0 || (s.dropLast && n < batch) {
		fail("data_loader", "%d samples make no batch of %d", n, batch)
	}
	d := &DataLoader{x: x, y: y, batch: batch, shuffle: s.shuffle, dropLast: s.dropLast, order: make([]int, n), epoch: -1}
	if s.shuffle {
		d.rng = rand.New(rand.NewPCG(s.shuffleSeed, 0x5eed))
	}
	d.pos = n // the first Next starts epoch 0
	return d
}

// Len is the number of batches per epoch.
func (d *DataLoader) Len() int {
	n := len(d.order)
	if d.dropLast {
		return n / d.batch
	}
	return (n + d.batch - 1) / d.batch
}

// Epoch is the number of the epoch being served (0 for the first).
func (d *DataLoader) Epoch() int { return d.epoch }

// Next moves to the next batch. It returns false once an epoch is over; the call after
// that starts the next epoch.
func (d *DataLoader) Next() bool {
	n := len(d.order)
	if d.pos >= n || (d.dropLast && d.pos+d.batch > n) {
		if d.inEpoch {
			d.inEpoch = false
			d.bx, d.by = nil, nil
			return false
		}
		d.inEpoch = true
		d.epoch++
		d.pos = 0
		for i := range d.order {
			d.order[i] = i
		}
		if d.shuffle {
			d.rng.Shuffle(n, func(i, j int) { d.order[i], d.order[j] = d.order[j], d.order[i] })
		}
	}
	end := min(d.pos+d.batch, n)
	idx := d.order[d.pos:end]
	d.pos = end
	bx, err := data.Take(d.x, idx)
	if err != nil {
		failErr("data_loader", err)
	}
	d.bx, d.by = Const(bx), nil
	if d.y != nil {
		by, err := data.Take(d.y, idx)
		if err != nil {
			failErr("data_loader", err)
		}
		d.by = Const(by)
	}
	return true
}

// Batch returns the current batch: x and y (nil when the loader has no y).
func (d *DataLoader) Batch() (x, y *Tensor) {
	if d.bx == nil {
		fail("data_loader", "no current batch: call Next first")
	}
	return d.bx, d.by
}
