package embed

// The forward pass spends nearly all its time in C = A·Wᵀ + b with W in
// PyTorch's [out, in] layout. W is packed once at load time into panels of
// panelWidth output columns, k-major (packed[p][k][0:16] = W[p*16 : p*16+16][k]),
// so a micro-kernel computes a kernelRows×panelWidth block of C with broadcast
// FMAs and unit-stride loads. On amd64 with AVX2+FMA the kernel is assembly;
// elsewhere a pure-Go kernel computes the same blocks.

const (
	panelWidth = 16 // two AVX2 registers of float32
	kernelRows = 6  // 12 accumulators + 2 panel loads + 1 broadcast = 15 of 16 YMM registers
)

// packedMatrix is a weight matrix [out, in] packed into panels, with its bias.
type packedMatrix struct {
	in, out int
	panels  int
	data    []float32 // panels * in * panelWidth
	bias    []float32 // panels * panelWidth, zero padded
}

func packMatrix(w, b []float32, out, in int) packedMatrix {
	p := (out + panelWidth - 1) / panelWidth
	pm := packedMatrix{in: in, out: out, panels: p, data: make([]float32, p*in*panelWidth), bias: make([]float32, p*panelWidth)}
	for o := 0; o < out; o++ {
		panel, j := o/panelWidth, o%panelWidth
		base := panel * in * panelWidth
		for k := 0; k < in; k++ {
			pm.data[base+k*panelWidth+j] = w[o*in+k]
		}
	}
	copy(pm.bias, b)
	return pm
}

// roundUp rounds n up to a multiple of m.
func roundUp(n, m int) int { return (n + m - 1) / m * m }

// gemmBlock computes rows [r0, r0+kernelRows) of C for panel p: C = A·Wᵀ + b.
// A has row stride lda and at least r0+kernelRows readable rows; C has row stride
// ldc and kernelRows writable rows. Partial panels go through a scratch block.
func gemmBlock(a []float32, lda int, m *packedMatrix, p int, c []float32, ldc int, r0 int, k int, scratch *[kernelRows * panelWidth]float32) {
	pan := m.data[p*m.in*panelWidth:]
	bias := m.bias[p*panelWidth:]
	col := p * panelWidth
	if col+panelWidth <= ldc && col+panelWidth <= m.out {
		kernel6x16(a[r0*lda:], lda, pan, k, c[r0*ldc+col:], ldc, bias)
		return
	}
	kernel6x16(a[r0*lda:], lda, pan, k, scratch[:], panelWidth, bias)
	n := min(m.out, ldc) - col
	for r := 0; r < kernelRows; r++ {
		copy(c[(r0+r)*ldc+col:(r0+r)*ldc+col+n], scratch[r*panelWidth:r*panelWidth+n])
	}
}

// gemmBlocks computes row blocks [b0, b1) (of kernelRows rows each) of C
// for panel p, as gemmBlock does for one.
func gemmBlocks(a []float32, lda int, m *packedMatrix, p int, c []float32, ldc int, b0, b1 int, k int, scratch *[kernelRows * panelWidth]float32) {
	col := p * panelWidth
	if b1 <= b0 {
		return
	}
	if col+panelWidth <= ldc && col+panelWidth <= m.out {
		r0 := b0 * kernelRows
		kernelPanel(a[r0*lda:], lda, m.data[p*m.in*panelWidth:], k, c[r0*ldc+col:], ldc, m.bias[p*panelWidth:], b1-b0)
		return
	}
	for b := b0; b < b1; b++ {
		gemmBlock(a, lda, m, p, c, ldc, b*kernelRows, k, scratch)
	}
}

// gemmPanels computes panels [p0, p1) of row blocks [b0, b1) of C, as
// gemmBlocks does for one panel; two full panels side by side go through
// kernelPanelPair (one AVX-512 kernel where the CPU has it).
func gemmPanels(a []float32, lda int, m *packedMatrix, p0, p1 int, c []float32, ldc int, b0, b1 int, k int, scratch *[kernelRows * panelWidth]float32) {
	if b1 <= b0 {
		return
	}
	p := p0
	if useAVX512 {
		r0 := b0 * kernelRows
		for ; p+1 < p1; p += 2 {
			col := p * panelWidth
			if col+2*panelWidth > ldc || col+2*panelWidth > m.out {
				break
			}
			kernelPanelPair(a[r0*lda:], lda, m.data[p*m.in*panelWidth:], k, c[r0*ldc+col:], ldc, m.bias[p*panelWidth:], b1-b0)
		}
	}
	for ; p < p1; p++ {
		gemmBlocks(a, lda, m, p, c, ldc, b0, b1, k, scratch)
	}
}

// kernelPanelGo runs kernel6x16Go on blocks consecutive row blocks.
func kernelPanelGo(a []float32, lda int, b []float32, k int, c []float32, ldc int, bias []float32, blocks int) {
	for i := 0; i < blocks; i++ {
		kernel6x16Go(a[i*kernelRows*lda:], lda, b, k, c[i*kernelRows*ldc:], ldc, bias)
	}
}

// kernel6x16Go is the portable micro-kernel: c[r][j] = bias[j] + Σk a[r][k]·b[k][j].
func kernel6x16Go(a []float32, lda int, b []float32, k int, c []float32, ldc int, bias []float32) {
	var acc [kernelRows][panelWidth]float32
	for r := range acc {
		copy(acc[r][:], bias[:panelWidth])
	}
	for kk := 0; kk < k; kk++ {
		bp := (*[panelWidth]float32)(b[kk*panelWidth:])
		for r := 0; r < kernelRows; r++ {
			av := a[r*lda+kk]
			row := &acc[r]
			for j := 0; j < panelWidth; j++ {
				row[j] += av * bp[j]
			}
		}
	}
	for r := 0; r < kernelRows; r++ {
		copy(c[r*ldc:r*ldc+panelWidth], acc[r][:])
	}
}
