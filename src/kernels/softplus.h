// torch's softplus, log(1 + e^x) with its threshold of 20 above which it returns x: the step sizes
// of the recurrent mixers, xIELU's learned scalars and deepseek_v4's router scores go through it.
#pragma once

#include <cmath>

namespace canrun {

inline float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

}  // namespace canrun
