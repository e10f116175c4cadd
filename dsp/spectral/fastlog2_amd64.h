// FASTLOG2, the AVX2 form of fastLog2 (gain.go), for the kernels of
// gainkern_amd64.s and noisekern_amd64.s, which both keep R8 at
// gainConsts (gainkern.go) while they run it.

// The offsets in gainConsts of the constants FASTLOG2 reads (gainkern_amd64.s
// lists every row as K_ names).
#define G_One 0(R8)
#define G_Log2C1 288(R8)
#define G_Log2C2 320(R8)
#define G_Log2C3 352(R8)
#define G_Log2C4 384(R8)
#define G_Log2C5 416(R8)
#define G_Log2C6 448(R8)
#define G_ExpBias 480(R8)
#define G_Mant52 1024(R8)
#define G_OneBits 1056(R8)
#define G_Magic52 1088(R8)

// FASTLOG2 sets D to fastLog2(X) (X > 0, kept); T and A are clobbered.
// The exponent becomes a float64 exactly as 2^52 + e - (2^52 + 1023).
#define FASTLOG2(X, D, T, A) \
	VPSRLQ  $52, X, D; \
	VPOR    G_Magic52, D, D; \
	VSUBPD  G_ExpBias, D, D; \
	VPAND   G_Mant52, X, T; \
	VPOR    G_OneBits, T, T; \
	VSUBPD  G_One, T, T; \
	VMULPD  G_Log2C6, T, A; \
	VADDPD  G_Log2C5, A, A; \
	VMULPD  T, A, A; \
	VADDPD  G_Log2C4, A, A; \
	VMULPD  T, A, A; \
	VADDPD  G_Log2C3, A, A; \
	VMULPD  T, A, A; \
	VADDPD  G_Log2C2, A, A; \
	VMULPD  T, A, A; \
	VADDPD  G_Log2C1, A, A; \
	VMULPD  T, A, A; \
	VADDPD  A, D, D
