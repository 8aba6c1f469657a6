package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// keptRun is a run of consecutive rows a filter keeps: [start, end).
type keptRun struct{ start, end int }

// keptRuns appends to runs the runs of rows where mask is TRUE (not NULL)
// and returns them with how many rows they hold.
func keptRuns(runs []keptRun, mask *array.Boolean) ([]keptRun, int) {
	n, kept := mask.Len(), 0
	in := false
	for i := 0; i < n; i++ {
		if mask.IsValid(i) && mask.Value(i) {
			kept++
			if !in {
				runs = append(runs, keptRun{start: i})
				in = true
			}
		} else if in {
			runs[len(runs)-1].end = i
			in = false
		}
	}
	if in {
		runs[len(runs)-1].end = n
	}
	return runs, kept
}

// filterColumn keeps the rows of a in runs (kept rows in all): fixed-width
// and string columns are copied run by run, a memmove per run; other
// types go through Arrow's filter with mask.
func filterColumn(t *taskContext, mem memory.Allocator, a arrow.Array, mask *array.Boolean, runs []keptRun, kept int) (arrow.Array, error) {
	d := a.Data()
	off := d.Offset()
	var valid *memory.Buffer
	if a.NullN() > 0 {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(kept))))
		src, dst, j := d.Buffers()[0].Bytes(), valid.Bytes(), 0
		for _, r := range runs {
			bitutil.CopyBitmap(src, off+r.start, r.end-r.start, dst, j)
			j += r.end - r.start
		}
	}
	nulls := func() int {
		if valid == nil {
			return 0
		}
		return kept - bitutil.CountSetBits(valid.Bytes(), 0, kept)
	}
	switch dt := a.DataType().(type) {
	case arrow.FixedWidthDataType:
		if a.DataType().ID() == arrow.BOOL || dt.BitWidth()%8 != 0 || len(d.Buffers()) != 2 {
			break
		}
		w := dt.BitWidth() / 8
		vals := memory.NewResizableBuffer(mem)
		vals.Resize(kept * w)
		src, dst, j := d.Buffers()[1].Bytes(), vals.Bytes(), 0
		for _, r := range runs {
			j += copy(dst[j:], src[(off+r.start)*w:(off+r.end)*w])
		}
		out := array.NewData(a.DataType(), kept, []*memory.Buffer{valid, vals}, nil, nulls(), 0)
		defer out.Release()
		releaseBufs(valid, vals)
		return array.MakeFromData(out), nil
	case *arrow.StringType, *arrow.BinaryType:
		srcOffs := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[off : off+d.Len()+1]
		var srcData []byte
		if b := d.Buffers()[2]; b != nil {
			srcData = b.Bytes()
		}
		size := 0
		for _, r := range runs {
			size += int(srcOffs[r.end] - srcOffs[r.start])
		}
		offs := memory.NewResizableBuffer(mem)
		offs.Resize((kept + 1) * 4)
		data := memory.NewResizableBuffer(mem)
		data.Resize(size)
		dstOffs, dstData := arrow.Int32Traits.CastFromBytes(offs.Bytes()), data.Bytes()
		j, pos := 0, int32(0)
		for _, r := range runs {
			base := srcOffs[r.start]
			for i := r.start; i < r.end; i++ {
				dstOffs[j] = pos + srcOffs[i] - base
				j++
			}
			k := copy(dstData[pos:], srcData[base:srcOffs[r.end]])
			pos += int32(k)
		}
		dstOffs[kept] = pos
		out := array.NewData(a.DataType(), kept, []*memory.Buffer{valid, offs, data}, nil, nulls(), 0)
		defer out.Release()
		releaseBufs(valid, offs, data)
		return array.MakeFromData(out), nil
	}
	releaseBufs(valid)
	return compute.FilterArray(t.ctx, a, mask, *compute.DefaultFilterOptions())
}

func releaseBufs(bs ...*memory.Buffer) {
	for _, b := range bs {
		if b != nil {
			b.Release()
		}
	}
}
