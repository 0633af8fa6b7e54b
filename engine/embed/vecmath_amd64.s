//go:build amd64 && !purego

#include "textflag.h"

// Constants broadcast by the kernels below (see mathf.go for the formulas).
DATA vconst<>+0(SB)/4, $0x3fb8aa3b   // log2(e)
DATA vconst<>+4(SB)/4, $0x3f317200   // ln2 high part 0.693145751953125
DATA vconst<>+8(SB)/4, $0x35bfbe8e   // ln2 low part 1.4286068e-06
DATA vconst<>+12(SB)/4, $0x3f800000  // 1
DATA vconst<>+16(SB)/4, $0x3f000000  // 1/2
DATA vconst<>+20(SB)/4, $0x3e2aaaab  // 1/6
DATA vconst<>+24(SB)/4, $0x3d2aaaab  // 1/24
DATA vconst<>+28(SB)/4, $0x3c088889  // 1/120
DATA vconst<>+32(SB)/4, $0x3ab60b61  // 1/720
DATA vconst<>+36(SB)/4, $0xc2a00000  // -80
DATA vconst<>+40(SB)/4, $0x42b00000  // 88
DATA vconst<>+44(SB)/4, $0x7fffffff  // abs mask
DATA vconst<>+48(SB)/4, $0x3f3504f3  // 1/sqrt(2)
DATA vconst<>+52(SB)/4, $0x3ea7ba05  // A&S p = 0.3275911
DATA vconst<>+56(SB)/4, $0x3f87dc22  // a5 = 1.061405429
DATA vconst<>+60(SB)/4, $0xbfba00e3  // a4 = -1.453152027
DATA vconst<>+64(SB)/4, $0x3fb5f0e3  // a3 = 1.421413741
DATA vconst<>+68(SB)/4, $0xbe91a98e  // a2 = -0.284496736
DATA vconst<>+72(SB)/4, $0x3e827906  // a1 = 0.254829592
GLOBL vconst<>(SB), RODATA|NOPTR, $76

// EXP8 computes Y_in = exp(Y_in) in place (Y_in must not be Y8..Y15).
// Clobbers Y8..Y15.
#define EXP8(IN) \
	VMAXPS       Y13, IN, IN \
	VMINPS       Y14, IN, IN \
	VMULPS       Y15, IN, Y8 \
	VROUNDPS     $0, Y8, Y8 \
	VBROADCASTSS vconst<>+4(SB), Y9 \
	VFNMADD231PS Y9, Y8, IN \
	VBROADCASTSS vconst<>+8(SB), Y9 \
	VFNMADD231PS Y9, Y8, IN \
	VBROADCASTSS vconst<>+32(SB), Y10 \
	VBROADCASTSS vconst<>+28(SB), Y9 \
	VFMADD213PS  Y9, IN, Y10 \
	VBROADCASTSS vconst<>+24(SB), Y9 \
	VFMADD213PS  Y9, IN, Y10 \
	VBROADCASTSS vconst<>+20(SB), Y9 \
	VFMADD213PS  Y9, IN, Y10 \
	VBROADCASTSS vconst<>+16(SB), Y9 \
	VFMADD213PS  Y9, IN, Y10 \
	VFMADD213PS  Y12, IN, Y10 \
	VFMADD213PS  Y12, IN, Y10 \
	VCVTPS2DQ    Y8, Y8 \
	VPSLLD       $23, Y8, Y8 \
	VPADDD       Y8, Y10, IN

#define LOADEXPCONST \
	VBROADCASTSS vconst<>+12(SB), Y12 \
	VBROADCASTSS vconst<>+36(SB), Y13 \
	VBROADCASTSS vconst<>+40(SB), Y14 \
	VBROADCASTSS vconst<>+0(SB), Y15

// func expScaledAVX2(x *float32, n int, scale, shift float32)
// x[i] = exp(x[i]*scale - shift) for i < n, n a multiple of 8.
TEXT ·expScaledAVX2(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y6
	VBROADCASTSS shift+20(FP), Y7
	LOADEXPCONST
	SHRQ         $3, CX
	JZ           expdone

exploop:
	VMOVUPS (SI), Y0
	VMULPS  Y6, Y0, Y0
	VSUBPS  Y7, Y0, Y0
	EXP8(Y0)
	VMOVUPS Y0, (SI)
	ADDQ    $32, SI
	DECQ    CX
	JNZ     exploop

expdone:
	VZEROUPPER
	RET

// func geluAVX2(x *float32, n int)
// x[i] = 0.5·(x + |x|·erf(|x|/√2)) for i < n, n a multiple of 8, with erf from
// Abramowitz & Stegun 7.1.26.
TEXT ·geluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	LOADEXPCONST
	SHRQ $3, CX
	JZ   geludone

geluloop:
	VMOVUPS      (SI), Y0              // x
	VBROADCASTSS vconst<>+44(SB), Y1
	VANDPS       Y1, Y0, Y1            // |x|
	VBROADCASTSS vconst<>+48(SB), Y2
	VMULPS       Y2, Y1, Y2            // z = |x|/√2
	VBROADCASTSS vconst<>+52(SB), Y3
	VFMADD213PS  Y12, Y2, Y3           // 1 + p·z
	VDIVPS       Y3, Y12, Y3           // t = 1/(1 + p·z)
	VBROADCASTSS vconst<>+56(SB), Y4
	VBROADCASTSS vconst<>+60(SB), Y5
	VFMADD213PS  Y5, Y3, Y4
	VBROADCASTSS vconst<>+64(SB), Y5
	VFMADD213PS  Y5, Y3, Y4
	VBROADCASTSS vconst<>+68(SB), Y5
	VFMADD213PS  Y5, Y3, Y4
	VBROADCASTSS vconst<>+72(SB), Y5
	VFMADD213PS  Y5, Y3, Y4
	VMULPS       Y3, Y4, Y4            // poly(t)·t
	VMULPS       Y2, Y2, Y5
	VXORPS       Y6, Y6, Y6
	VSUBPS       Y5, Y6, Y5            // -z²
	EXP8(Y5)
	VFNMADD213PS Y12, Y5, Y4           // y = 1 - poly·exp(-z²)
	VFMADD213PS  Y0, Y1, Y4            // x + |x|·y
	VBROADCASTSS vconst<>+16(SB), Y5
	VMULPS       Y5, Y4, Y4
	VMOVUPS      Y4, (SI)
	ADDQ         $32, SI
	DECQ         CX
	JNZ          geluloop

geludone:
	VZEROUPPER
	RET

// func maxAVX2(x *float32, n int) float32
// max(x[0:n]) for n a positive multiple of 8.
TEXT ·maxAVX2(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	ADDQ    $32, SI
	SHRQ    $3, CX
	DECQ    CX
	JZ      maxreduce

maxloop:
	VMAXPS (SI), Y0, Y0
	ADDQ   $32, SI
	DECQ   CX
	JNZ    maxloop

maxreduce:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSS       X0, ret+16(FP)
	VZEROUPPER
	RET

// func expSumAVX2(x *float32, n int, scale, shift float32) float32
// x[i] = exp(x[i]*scale - shift) for i < n, n a multiple of 8; returns Σ x[i].
TEXT ·expSumAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y6
	VBROADCASTSS shift+20(FP), Y7
	LOADEXPCONST
	VXORPS       Y5, Y5, Y5
	SHRQ         $3, CX
	JZ           expsumdone

expsumloop:
	VMOVUPS (SI), Y0
	VMULPS  Y6, Y0, Y0
	VSUBPS  Y7, Y0, Y0
	EXP8(Y0)
	VMOVUPS Y0, (SI)
	VADDPS  Y0, Y5, Y5
	ADDQ    $32, SI
	DECQ    CX
	JNZ     expsumloop

expsumdone:
	VEXTRACTF128 $1, Y5, X1
	VADDPS       X1, X5, X5
	VPERMILPS    $0x4e, X5, X1
	VADDPS       X1, X5, X5
	VPERMILPS    $0xb1, X5, X1
	VADDPS       X1, X5, X5
	VMOVSS       X5, ret+24(FP)
	VZEROUPPER
	RET

// func addNormAVX2(x, t, gamma, beta *float32, h int, invH, eps float32, add bool)
// One row: x += t (when add), then x = (x - mean)/√(var + eps)·g + b, with
// h a positive multiple of 8.
TEXT ·addNormAVX2(SB), NOSPLIT, $0-49
	MOVQ    x+0(FP), SI
	MOVQ    t+8(FP), DI
	MOVQ    gamma+16(FP), R8
	MOVQ    beta+24(FP), R9
	MOVQ    h+32(FP), CX
	MOVBLZX add+48(FP), R10
	SHRQ    $3, CX
	VXORPS  Y0, Y0, Y0
	MOVQ    SI, AX
	MOVQ    CX, DX

	// Pass 1: residual add and sum.
normsum:
	VMOVUPS (AX), Y1
	TESTQ   R10, R10
	JZ      normnoadd
	VADDPS  (DI), Y1, Y1
	VMOVUPS Y1, (AX)
	ADDQ    $32, DI

normnoadd:
	VADDPS Y1, Y0, Y0
	ADDQ   $32, AX
	DECQ   DX
	JNZ    normsum

	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VADDPS       X1, X0, X0
	VMOVSS       invH+40(FP), X7
	VMULSS       X7, X0, X0
	VBROADCASTSS X0, Y2          // mean

	// Pass 2: variance.
	VXORPS Y0, Y0, Y0
	MOVQ   SI, AX
	MOVQ   CX, DX

normvar:
	VMOVUPS     (AX), Y1
	VSUBPS      Y2, Y1, Y1
	VFMADD231PS Y1, Y1, Y0
	ADDQ        $32, AX
	DECQ        DX
	JNZ         normvar

	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VADDPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VADDPS       X1, X0, X0
	VMULSS       X7, X0, X0
	VADDSS       eps+44(FP), X0, X0
	VSQRTSS      X0, X0, X0
	VBROADCASTSS vconst<>+12(SB), X1
	VDIVSS       X0, X1, X0
	VBROADCASTSS X0, Y3          // 1/√(var+eps)

	// Pass 3: normalise, scale, shift.
normout:
	VMOVUPS     (SI), Y1
	VSUBPS      Y2, Y1, Y1
	VMULPS      Y3, Y1, Y1
	VMOVUPS     (R9), Y4
	VFMADD132PS (R8), Y4, Y1
	VMOVUPS     Y1, (SI)
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	DECQ        CX
	JNZ         normout

	VZEROUPPER
	RET
