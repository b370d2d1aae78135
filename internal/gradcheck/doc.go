// Package gradcheck checks the gradient rules of package tensor against central finite
// differences, by running graphs on the CPU backend.
//
// It lives outside package tensor because executing a graph needs the runtime, which
// imports tensor. Its tests hold one table of cases covering every differentiable op;
// a new op adds a case there.
//
// Approach: the dtype set has no float64, so graphs compute in F32. To keep finite
// differences meaningful in single precision, a check
//
//   - reduces an output of any shape to a scalar on the host, in float64, as ⟨r, f(x)⟩
//     for a fixed random r, and compares the numeric derivative of that scalar with the
//     vector-Jacobian product tensor.GradWithSeed(f, r) (which also exercises seeds);
//   - uses central differences with a step of 1e-2 by default (truncation error
//     O(step²), rounding error O(1e-7·|⟨r,f⟩|/step)) and divides by the step actually
//     taken after rounding x±step to float32;
//   - accepts |analytic - numeric| <= Tol·(1 + |numeric|), Tol 3e-3 by default (the
//     largest error over all cases was 9e-4 when this was written);
//   - draws inputs away from kinks and ties where an op has them (see Distinct and
//     Away), since a finite difference across a kink measures neither side.
package gradcheck
