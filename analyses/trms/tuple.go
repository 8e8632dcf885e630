package trms

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// U128 is an unsigned 128-bit integer: sums of squared costs overflow 64
// bits on long runs, and exact integers keep merges order-independent.
type U128 struct{ Hi, Lo uint64 }

// Add returns u+v (wrapping at 2^128).
func (u U128) Add(v U128) U128 {
	lo, c := bits.Add64(u.Lo, v.Lo, 0)
	hi, _ := bits.Add64(u.Hi, v.Hi, c)
	return U128{hi, lo}
}

// Square returns x*x.
func Square(x uint64) U128 {
	hi, lo := bits.Mul64(x, x)
	return U128{hi, lo}
}

// Float returns u as a float64.
func (u U128) Float() float64 { return float64(u.Hi)*0x1p64 + float64(u.Lo) }

// String formats u in decimal.
func (u U128) String() string {
	if u.Hi == 0 {
		return strconv.FormatUint(u.Lo, 10)
	}
	const e19 = 10_000_000_000_000_000_000
	var parts []uint64 // base-10^19 digits, least significant first
	hi, lo := u.Hi, u.Lo
	for hi != 0 || lo != 0 {
		var r uint64
		hi, r = bits.Div64(0, hi, e19)
		lo, r = bits.Div64(r, lo, e19)
		parts = append(parts, r)
	}
	var sb strings.Builder
	sb.WriteString(strconv.FormatUint(parts[len(parts)-1], 10))
	for i := len(parts) - 2; i >= 0; i-- {
		fmt.Fprintf(&sb, "%019d", parts[i])
	}
	return sb.String()
}

var errU128Range = errors.New("out of 128-bit range")

// ParseU128 parses a decimal integer. aprof writes sums of squares with
// "%.0f", so a fractional or exponent form is accepted and truncated.
func ParseU128(s string) (U128, error) {
	if strings.ContainsAny(s, ".eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return U128{}, fmt.Errorf("parse %q: not a non-negative number", s)
		}
		b, _ := big.NewFloat(f).Int(nil)
		return u128FromBig(b, s)
	}
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		return U128{Lo: v}, nil
	}
	b, ok := new(big.Int).SetString(s, 10)
	if !ok || b.Sign() < 0 {
		return U128{}, fmt.Errorf("parse %q: not a non-negative integer", s)
	}
	return u128FromBig(b, s)
}

func u128FromBig(b *big.Int, s string) (U128, error) {
	if b.BitLen() > 128 {
		return U128{}, fmt.Errorf("parse %q: %w", s, errU128Range)
	}
	lo := new(big.Int).And(b, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi := new(big.Int).Rsh(b, 64).Uint64()
	return U128{hi, lo}, nil
}

// MarshalJSON writes u as a JSON number.
func (u U128) MarshalJSON() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalJSON reads a JSON number.
func (u *U128) UnmarshalJSON(b []byte) error {
	v, err := ParseU128(strings.Trim(string(b), `"`))
	if err != nil {
		return err
	}
	*u = v
	return nil
}

// Tuple aggregates the activations of one routine (or calling context) on
// one input size N: PLDI'12 §2.2's <n, c, max, min, sum, sq> for
// cumulative cost, the same for self cost, aprof's "real" cumulative sum,
// and the TRMS paper's input characterization.
type Tuple struct {
	N         uint64 `json:"n"`     // input size (RMS or TRMS)
	Calls     uint64 `json:"calls"` // activations on this input size
	Min       uint64 `json:"min"`   // cumulative cost
	Max       uint64 `json:"max"`
	Sum       uint64 `json:"sum"`
	SumSq     U128   `json:"sum_sq"`
	RealSum   uint64 `json:"real_sum"` // cumulative cost of activations with no pending activation of the same routine below them
	SelfMin   uint64 `json:"self_min"`
	SelfMax   uint64 `json:"self_max"`
	SelfSum   uint64 `json:"self_sum"`
	SelfSumSq U128   `json:"self_sum_sq"`
	// RMSSum and RMSSumSq sum the RMS (and its square) of the activations;
	// for TRMS tuples they relate the two metrics (aprof's rms_sum).
	RMSSum   uint64 `json:"rms_sum"`
	RMSSumSq U128   `json:"rms_sum_sq"`
	// Induced first-accesses (TRMS paper Def. 2), cumulative over the
	// activations' subtrees: external (kernel writes) and thread-induced.
	ExtSum uint64 `json:"ext_sum"`
	ThrSum uint64 `json:"thr_sum"`
	// The same made by the activations themselves, not their callees.
	ExtSelf uint64 `json:"ext_self"`
	ThrSelf uint64 `json:"thr_self"`
}

// activation is the result of one completed routine activation.
type activation struct {
	rms, trms        uint64
	cost, self       uint64
	ext, thr         uint64
	extSelf, thrSelf uint64
	nested           bool // another activation of the same routine was pending below
}

// add folds one activation into t.
func (t *Tuple) add(a *activation) {
	if t.Calls == 0 || a.cost < t.Min {
		t.Min = a.cost
	}
	if t.Calls == 0 || a.self < t.SelfMin {
		t.SelfMin = a.self
	}
	t.Calls++
	t.Max = max(t.Max, a.cost)
	t.Sum += a.cost
	t.SumSq = t.SumSq.Add(Square(a.cost))
	if !a.nested {
		t.RealSum += a.cost
	}
	t.SelfMax = max(t.SelfMax, a.self)
	t.SelfSum += a.self
	t.SelfSumSq = t.SelfSumSq.Add(Square(a.self))
	t.RMSSum += a.rms
	t.RMSSumSq = t.RMSSumSq.Add(Square(a.rms))
	t.ExtSum += a.ext
	t.ThrSum += a.thr
	t.ExtSelf += a.extSelf
	t.ThrSelf += a.thrSelf
}

// Merge folds o (a tuple on the same input size) into t, as aprof's
// incremental mode does: counts and sums add, min and max combine.
func (t *Tuple) Merge(o *Tuple) {
	if o.Calls == 0 {
		return
	}
	if t.Calls == 0 {
		n := t.N
		*t = *o
		t.N = n
		return
	}
	t.Calls += o.Calls
	t.Min = min(t.Min, o.Min)
	t.Max = max(t.Max, o.Max)
	t.Sum += o.Sum
	t.SumSq = t.SumSq.Add(o.SumSq)
	t.RealSum += o.RealSum
	t.SelfMin = min(t.SelfMin, o.SelfMin)
	t.SelfMax = max(t.SelfMax, o.SelfMax)
	t.SelfSum += o.SelfSum
	t.SelfSumSq = t.SelfSumSq.Add(o.SelfSumSq)
	t.RMSSum += o.RMSSum
	t.RMSSumSq = t.RMSSumSq.Add(o.RMSSumSq)
	t.ExtSum += o.ExtSum
	t.ThrSum += o.ThrSum
	t.ExtSelf += o.ExtSelf
	t.ThrSelf += o.ThrSelf
}
