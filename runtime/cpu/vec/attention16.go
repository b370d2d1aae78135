package vec

// AttnQuad is the rows AttnKeysGrad16 reads (Q, GY) and writes (DQ) for four query rows
// of attention with 16 features per head.
type AttnQuad struct{ Q, GY, DQ [4]*float32 }
